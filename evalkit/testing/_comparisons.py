"""``assert_not_worse`` and ``assert_improved``: a paired comparison (``compare_grades`` /
``compare_runs``, a sequential look, a draft-vs-prod result, or one part of a Holm family)
read as a check.

Non-inferiority (``assert_not_worse``) passes when the one-sided lower bound of the difference
is above ``-margin`` (the comparison's ``non_inferior``), fails when the verdict is
``regressed`` (the whole interval below zero and beyond the margin), and is insufficient
otherwise. ``assert_improved`` passes on ``improved``, fails on ``regressed`` or
``no_difference`` (shown to move less than the margin), and is insufficient otherwise.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ..compare import CompareOptions, Comparison, Verdict, compare_grades
from ..flows import DraftVsProd, compare_runs
from ..grading import JudgeArg, ScorecardLike
from ..store import Run
from ._check import Check, FamilyPlace, Outcome, settle
from ._family import Part
from ._inputs import grades_pair, scorecard_for
from ._needed import comparison_needs
from ._options import AssertOptions

__all__ = ["assert_improved", "assert_not_worse", "comparison_check"]

Kind = Literal["not_worse", "improved"]

#: Paired cells named in a failure message, the ones that moved most.
_CELLS_SHOWN = 3


def _claim(kind: Kind, margin: float) -> str:
    if kind == "not_worse":
        return f"the candidate is not worse than the baseline by more than {margin:g} points"
    return f"the candidate is better than the baseline (minimum effect {margin:g} points)"


def _outcome(kind: Kind, comparison: Comparison) -> Outcome:
    verdict = comparison.verdict
    if kind == "not_worse":
        if comparison.non_inferior:
            return "passed"
        return "failed" if verdict == Verdict.REGRESSED else "insufficient"
    if verdict == Verdict.IMPROVED:
        return "passed"
    if verdict in (Verdict.REGRESSED, Verdict.NO_DIFFERENCE):
        return "failed"
    return "insufficient"


def _cells_moved(comparison: Comparison, kind: Kind) -> str | None:
    """The paired cells that moved most in the direction that matters (down for
    non-inferiority, up for an improvement)."""
    cells = comparison.by_cell
    if cells.empty or "paired" not in cells.columns:
        return None
    sign = 1.0 if kind == "not_worse" else -1.0
    moved = sign * cells["difference"].to_numpy(dtype=np.float64) < 0
    paired = cells[cells["paired"].astype(bool).to_numpy() & moved]
    if paired.empty:
        return None
    order = np.argsort(sign * paired["difference"].to_numpy(dtype=np.float64), kind="stable")
    shown = []
    for row in paired.iloc[order[:_CELLS_SHOWN]].itertuples():
        shown.append(
            f"{str(row.cell_id)[:10]} ({row.persona_label}) {row.difference:+.1f} points "
            f"({row.n_baseline} vs {row.n_candidate} conversations)"
        )
    word = "down" if kind == "not_worse" else "up"
    return f"cells that moved most {word}: " + "; ".join(shown)


def comparison_check(
    kind: Kind, comparison: Comparison, *, place: FamilyPlace | None = None
) -> Check:
    """``comparison`` read as a ``kind`` check (no raising; :func:`settle` ends it)."""
    margin = comparison.min_effect
    outcome = _outcome(kind, comparison)
    printed = str(comparison).splitlines()
    details = [line.strip() for line in printed[1:]]
    if kind == "improved":
        details = [d for d in details if not d.startswith("non-inferior")]
    moved = _cells_moved(comparison, kind)
    if moved and outcome != "passed":
        details.append(moved)
    needed = None
    if outcome == "insufficient":
        needed = (
            "the sequential plan goes on: the next look decides or narrows it"
            if comparison.stop is False
            else comparison_needs(comparison, kind)
        )
    return Check(
        kind=kind,
        claim=_claim(kind, margin),
        outcome=outcome,
        verdict=comparison.verdict.value,
        evidence=printed[0],
        difference=comparison.difference,
        interval=comparison.interval,
        n=comparison.n,
        confidence=comparison.confidence,
        unit="points",
        details=tuple(details),
        family=place,
        needed=needed,
        result=comparison,
    )


def _same_margin(given: float | None, made: float, what: str) -> None:
    if given is not None and not math.isclose(given, made):
        raise ValueError(
            f"margin: {what} was made with a margin (min_effect) of {made:g} points, not "
            f"{given:g}; make it with margin={given:g}, or give the two sides instead"
        )


def _compare(
    kind: Kind,
    baseline: Any,
    candidate: Any,
    margin: float | None,
    scorecard: ScorecardLike | None,
    judge: JudgeArg,
    opts: AssertOptions,
) -> Check:
    if isinstance(baseline, Part):
        if candidate is not None:
            raise TypeError("candidate: a family's part is already a comparison; give it alone")
        if baseline.comparison is None:
            raise TypeError(
                f"{baseline.name!r} is a part of a pass-rate family: use assert_pass_rate"
            )
        _same_margin(margin, baseline.comparison.min_effect, f"the family of {baseline.name!r}")
        return comparison_check(kind, baseline.comparison, place=baseline.place)
    if isinstance(baseline, Comparison | DraftVsProd):
        if candidate is not None:
            raise TypeError("candidate: a comparison was given; give it alone")
        comparison = baseline if isinstance(baseline, Comparison) else baseline.comparison
        _same_margin(margin, comparison.min_effect, "this comparison")
        return comparison_check(kind, comparison)
    if candidate is None:
        raise TypeError(
            "candidate: give the baseline and the candidate (runs, grades or grades frames), "
            "or one comparison"
        )
    compare = CompareOptions(
        confidence=opts.confidence, min_effect=5.0 if margin is None else margin
    )
    if isinstance(baseline, Run) and isinstance(candidate, Run):
        card = scorecard_for((baseline, candidate), scorecard)
        comparison = compare_runs(baseline, candidate, card, judge=judge, options=compare)
    else:
        base, cand = grades_pair(baseline, candidate, scorecard, judge)
        comparison = compare_grades(base, cand, options=compare)
    return comparison_check(kind, comparison)


def assert_not_worse(
    baseline: Any,
    candidate: Any = None,
    *,
    margin: float | None = None,
    scorecard: ScorecardLike | None = None,
    judge: JudgeArg = None,
    options: AssertOptions | None = None,
) -> Check:
    """Assert non-inferiority: the candidate is not worse than the baseline by more than
    ``margin`` points (default 5), on the one-sided lower bound of the paired difference.

    ``baseline`` and ``candidate`` are two runs (graded with ``scorecard``, or the one their
    stored grades share; ``judge`` for judged rules), two ``Grades`` or two grades frames; or
    ``baseline`` alone is a comparison already made: a ``Comparison`` (a sequential look
    too), a ``DraftVsProd``, or a part of a :func:`~evalkit.testing.family` (read at its
    Holm-adjusted level). Passes (returning the :class:`~evalkit.testing.Check`) when
    non-inferiority is shown, fails (``CheckFailed``, an ``AssertionError``) when the
    comparison says ``regressed``, and otherwise has insufficient evidence (what that
    becomes: ``AssertOptions.insufficient`` or the session's ``--evalkit-insufficient``).
    """
    __tracebackhide__ = True
    opts = options or AssertOptions()
    check = _compare("not_worse", baseline, candidate, margin, scorecard, judge, opts)
    return settle(check, opts)


def assert_improved(
    baseline: Any,
    candidate: Any = None,
    *,
    margin: float | None = None,
    scorecard: ScorecardLike | None = None,
    judge: JudgeArg = None,
    options: AssertOptions | None = None,
) -> Check:
    """Assert an improvement: the comparison's verdict is ``improved`` (its interval above
    zero and reaching beyond ``margin``, the minimum effect, default 5 points).

    Takes what :func:`assert_not_worse` takes. Fails when the comparison says ``regressed``
    or ``no_difference`` (any change is shown smaller than the margin), and otherwise has
    insufficient evidence.
    """
    __tracebackhide__ = True
    opts = options or AssertOptions()
    check = _compare("improved", baseline, candidate, margin, scorecard, judge, opts)
    return settle(check, opts)
