"""Grading's errors: a bad scorecard, and grading that cannot proceed."""

from __future__ import annotations

from collections.abc import Sequence

from ..api import EvalkitError, InvalidRequestError, Problem

__all__ = ["GradingError", "ScorecardError"]


class ScorecardError(InvalidRequestError):
    """A scorecard breaks the service's rules or the check schema; ``problems`` lists them all.

    Each problem's ``field`` names the rule and field, e.g. ``rules[2] (urdu-script).check``.
    """

    def __init__(self, problems: Sequence[Problem], source: str = "scorecard") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        EvalkitError.__init__(self, f"invalid {source} ({len(self.problems)} problem(s)):\n{lines}")


class GradingError(EvalkitError):
    """Grading cannot proceed (for example: judged rules and no judge configured)."""
