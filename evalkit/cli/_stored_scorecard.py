"""`evalkit compare` without ``--scorecard``: the one scorecard both runs are graded with, read
back from their stored grades; otherwise a message saying what to pass."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ._errors import ExitCode, fail

if TYPE_CHECKING:
    from ..grading import Scorecard
    from ..store import Run

__all__ = ["comparison_scorecard"]


def _graded(run: Run) -> set[str]:
    """The rubric versions the run's manifest says it was graded with."""
    grades = run.manifest.get("grades")
    return {str(k) for k in grades} if isinstance(grades, Mapping) else set()


def _names(rubrics: set[str]) -> str:
    return ", ".join(sorted(rubrics)) or "nothing"


def comparison_scorecard(given: Path | None, baseline: Run, candidate: Run) -> Path | Scorecard:
    """What to compare ``baseline`` and ``candidate`` under: the ``--scorecard`` file given;
    a rubric version both runs' stored grades share, named by ``--scorecard`` or, when none
    is given, the only one they share. Anything else is a usage error saying what to pass."""
    from ..grading import stored_scorecards

    if given is not None and given.is_file():
        return given
    shared = _graded(baseline) & _graded(candidate)
    names = f"{baseline.run_id} and {candidate.run_id}"
    if given is not None and str(given) not in shared:
        return given  # not a rubric of both runs: a file (whose absence is reported as such)
    wanted = {str(given)} if given is not None else shared
    if len(wanted) == 1:
        (rubric,) = wanted
        cards = [stored_scorecards(run).get(rubric) for run in (baseline, candidate)]
        first, second = cards
        if first is not None and second is not None:
            if first.content_hash == second.content_hash:
                return first
            raise fail(
                f"{names} were graded with different rules under {rubric}: pass --scorecard "
                "FILE to grade both with the same rules",
                ExitCode.USAGE,
            )
        raise fail(
            f"{names} are graded with {rubric}, but their stored grades keep no scorecard "
            "(graded by an older evalkit): pass --scorecard FILE",
            ExitCode.USAGE,
        )
    if shared:
        raise fail(
            f"{names} are both graded with {len(shared)} scorecards ({_names(shared)}): pass "
            f"--scorecard with one of them (e.g. -s {sorted(shared)[0]}) or a scorecard FILE",
            ExitCode.USAGE,
        )
    raise fail(
        f"{names} share no stored grades ({baseline.run_id}: {_names(_graded(baseline))}; "
        f"{candidate.run_id}: {_names(_graded(candidate))}): pass --scorecard FILE to grade "
        "both with it",
        ExitCode.USAGE,
    )
