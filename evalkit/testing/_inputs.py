"""What an assertion is given, made into grades: a stored :class:`~evalkit.store.Run` (graded
under a scorecard, from the cache), a :class:`~evalkit.grading.Grades` or a grades frame."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike, grade_run, stored_scorecards
from ..store import Run

__all__ = ["as_grades", "grades_pair", "scorecard_for"]


def scorecard_for(runs: tuple[Run, ...], scorecard: ScorecardLike | None) -> Scorecard:
    """``scorecard``, or the one scorecard every run's stored grades were made with."""
    if scorecard is not None:
        return Scorecard.validate(scorecard)
    shared: set[str] | None = None
    cards: dict[str, Scorecard] = {}
    for run in runs:
        found = stored_scorecards(run)
        cards.update(found)
        shared = set(found) if shared is None else shared & set(found)
    if shared is not None and len(shared) == 1:
        return cards[shared.pop()]
    have = ", ".join(sorted(shared or ())) or "none in common"
    raise ValueError(
        "scorecard: give the scorecard to grade the runs with (their stored grades name "
        f"{have}; a scorecard is taken from them only when they share exactly one)"
    )


def as_grades(value: Any, scorecard: ScorecardLike | None, judge: JudgeArg, name: str) -> Grades:
    """``value`` (a Run, a Grades or a grades frame) as :class:`Grades`; a Run is graded
    with ``scorecard`` (stored grades reused, judge calls from the judge's cache)."""
    if isinstance(value, Run):
        card = scorecard_for((value,), scorecard)
        return grade_run(value, card, judge=judge)
    if isinstance(value, Grades | pd.DataFrame):
        return Grades.of(value)
    raise TypeError(
        f"{name} must be a Run, a Grades or a grades DataFrame, not {type(value).__name__}"
    )


def grades_pair(
    baseline: Any, candidate: Any, scorecard: ScorecardLike | None, judge: JudgeArg
) -> tuple[Grades, Grades]:
    """Both sides as :class:`Grades`; two runs without a scorecard share their stored one."""
    runs = tuple(v for v in (baseline, candidate) if isinstance(v, Run))
    card: ScorecardLike | None = scorecard
    if runs and scorecard is None:
        card = scorecard_for(runs, None)
    return (
        as_grades(baseline, card, judge, "baseline"),
        as_grades(candidate, card, judge, "candidate"),
    )
