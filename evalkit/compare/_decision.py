"""The verdict from per-cell moments: intervals, error bounds, equivalence, non-inferiority.

One function, :func:`decide_grid`, decides every comparison evalkit makes (the headline, each
rule, each persona; every trial of a calibration run) from arrays, so what is calibrated is
what users get. It takes each side's per-cell moments three ways: with judge errors left out
(the estimate), scored as fail and scored as pass. Errors are missing verdicts, and missing is
not at random until shown to be: a judge that fails more on the candidate's bad conversations
would make it look better. So the verdict is ``improved`` only when the interval is above zero
both as estimated and in the pessimistic case (the candidate's errors failed, the baseline's
passed), ``regressed`` only when it is below zero both as estimated and in the optimistic case,
and ``no_difference`` only when every case lies within the margin; otherwise
``insufficient_evidence`` with the reason. Without errors the three cases coincide.

``no_difference`` is two one-sided tests at ``1 - confidence`` each (the ``2 * confidence -
1`` two-sided interval within ``+-min_effect``; Schuirmann 1987), and ``non_inferior`` is the
one-sided lower bound at ``confidence`` above ``-min_effect``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..stats import CellMoments, Interval, VarianceMethod, fisher_exact_p, paired_grid
from ._options import check_levels
from ._score import score_from_points
from ._verdict import Verdict

__all__ = [
    "ERRORS_ALPHA",
    "Decision",
    "Reason",
    "Scenarios",
    "decide_grid",
    "errors_differ",
    "rule_errors_bounded",
    "scenario_scores",
]

#: Two-sided level of Fisher's exact test on error counts above which errors count as
#: differing between sides (a screen: missing a real difference costs more than bounding
#: a verdict that did not need it).
ERRORS_ALPHA = 0.10

FloatArray = NDArray[np.float64]
_FAIL, _PASS, _NA, _ERROR = 0, 1, 2, 3


class Reason(IntEnum):
    """Why a verdict came out as it did (codes in :attr:`Decision.reason`)."""

    DECIDED = 0  # the interval decides on its own
    INTERVAL_HOLDS_ZERO = 1  # wide: holds zero and effects beyond the margin
    ERRORS_COULD_EXPLAIN = 2  # the estimate has a direction the error bounds do not confirm
    NO_INTERVAL = 3  # the design gives no interval (one cell, no repeats)
    RULES_LEFT_OUT = 4  # a side's scores leave out whole rules (no pass or fail, only errors)


@dataclass(frozen=True)
class Scenarios:
    """One side's per-cell moments with errors left out, scored as fail, scored as pass."""

    left_out: CellMoments
    as_fail: CellMoments
    as_pass: CellMoments

    @classmethod
    def same(cls, moments: CellMoments) -> Scenarios:
        """A side with no errors: the three cases coincide."""
        return cls(moments, moments, moments)

    def mask(self, keep: NDArray[np.bool_]) -> Scenarios:
        return Scenarios(self.left_out.mask(keep), self.as_fail.mask(keep), self.as_pass.mask(keep))


def scenario_scores(
    codes: NDArray[np.int8], points: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Conversation scores (0-100) from verdict codes ``(..., rules)``: errors left out,
    scored as fail, scored as pass. A conversation with no applicable rule (or a code of -1,
    no conversation) is NaN. The same formula as graded frames (:func:`score_from_points`)."""
    w = np.asarray(points, dtype=np.float64)
    awarded = ((codes == _PASS) * w).sum(axis=-1)
    possible = (((codes == _PASS) | (codes == _FAIL)) * w).sum(axis=-1)
    erred = ((codes == _ERROR) * w).sum(axis=-1)
    return (
        score_from_points(awarded, possible),
        score_from_points(awarded, possible + erred),
        score_from_points(awarded + erred, possible + erred),
    )


def errors_differ(
    baseline: tuple[Any, Any], candidate: tuple[Any, Any], alpha: float = ERRORS_ALPHA
) -> Any:
    """Whether ``(errors, n)`` differ between the sides beyond chance (Fisher's exact test)."""
    p = fisher_exact_p(baseline[0], baseline[1], candidate[0], candidate[1])
    return np.asarray(p) < alpha


def rule_errors_bounded(baseline: tuple[Any, Any], candidate: tuple[Any, Any]) -> Any:
    """Where a judged rule's verdict must hold under the error bounds: wherever the sides'
    judge-error rates ``(errors, n)`` differ at all, not only beyond chance.

    A rule's own errors are the missing verdicts of that rule, and a judge that errs more on
    the candidate's failing conversations hides exactly that rule's failures: a screen at
    :data:`ERRORS_ALPHA` lets enough of those through to lift the per-rule family's false
    alarms above nominal (6.3% at 5%), so each rule is bounded whenever its error rates
    differ in either (harmful) direction. The headline keeps the screen: its errors are
    spread over many rules' points.
    """
    eb, nb = (np.asarray(x, dtype=np.float64) for x in baseline)
    ec, nc = (np.asarray(x, dtype=np.float64) for x in candidate)
    with np.errstate(invalid="ignore", divide="ignore"):
        differ = (eb * nc != ec * nb) & ((eb + ec) > 0)
    return differ | np.asarray(errors_differ(baseline, candidate), dtype=bool)


@dataclass(frozen=True)
class Decision:
    """Arrays (or scalars) of one or many decisions; intervals in points."""

    verdict: Any  # Verdict or object array of Verdicts
    reason: Any  # Reason codes
    interval: Interval  # errors left out, at ``confidence``
    equivalence: Interval  # errors left out, at ``2 * confidence - 1``
    pessimistic: Interval  # candidate errors failed, baseline errors passed
    optimistic: Interval  # candidate errors passed, baseline errors failed
    non_inferior: Any  # bool
    non_inferiority_bound: Any  # the lowest one-sided lower bound over the cases
    method: Any  # VarianceMethod codes
    bounded: Any  # bool: whether the error bounds had to agree
    confidence: float
    min_effect: float


def decide_grid(
    baseline: Scenarios,
    candidate: Scenarios,
    *,
    confidence: float = 0.95,
    min_effect: float = 5.0,
    method: VarianceMethod | None = None,
    bounded: Any = True,
) -> Decision:
    """The verdict of candidate minus baseline over the paired cells (module docstring).

    ``bounded`` (bool or array): where the error bounds must agree with the estimate; callers
    set it where the sides' error rates differ beyond chance (:func:`errors_differ`).
    """
    check_levels(confidence, min_effect, "decide_grid")
    main = paired_grid(baseline.left_out, candidate.left_out, method=method)
    pess = paired_grid(baseline.as_pass, candidate.as_fail, method=method)
    opt = paired_grid(baseline.as_fail, candidate.as_pass, method=method)
    tost = 2.0 * confidence - 1.0
    i_main, i_pess, i_opt = (g.interval(confidence) for g in (main, pess, opt))
    e_main, e_pess, e_opt = (g.interval(tost) for g in (main, pess, opt))
    m = min_effect
    with np.errstate(invalid="ignore"):
        lo = np.asarray(i_main.low)
        hi = np.asarray(i_main.high)
        free = ~np.asarray(bounded, dtype=bool)
        no_difference = (
            (np.asarray(e_main.low) > -m)
            & (np.asarray(e_main.high) < m)
            & (free | ((np.asarray(e_pess.low) > -m) & (np.asarray(e_opt.high) < m)))
        )
        improved_alone = lo > 0
        regressed_alone = hi < 0
        improved = improved_alone & (free | (np.asarray(i_pess.low) > 0))
        regressed = regressed_alone & (free | (np.asarray(i_opt.high) < 0))
        bound = np.where(
            free, np.asarray(e_main.low), np.fmin(np.asarray(e_main.low), np.asarray(e_pess.low))
        )
        non_inferior = bound > -m
    verdict = np.select(
        [no_difference, improved, regressed],
        [
            np.asarray(Verdict.NO_DIFFERENCE, dtype=object),
            np.asarray(Verdict.IMPROVED, dtype=object),
            np.asarray(Verdict.REGRESSED, dtype=object),
        ],
        default=np.asarray(Verdict.INSUFFICIENT_EVIDENCE, dtype=object),
    )
    decided = no_difference | improved | regressed
    reason = np.select(
        [
            decided,
            np.asarray(main.method) == VarianceMethod.NONE,
            improved_alone | regressed_alone,
        ],
        [Reason.DECIDED, Reason.NO_INTERVAL, Reason.ERRORS_COULD_EXPLAIN],
        default=Reason.INTERVAL_HOLDS_ZERO,
    )
    scalar = np.ndim(verdict) == 0
    return Decision(
        verdict=verdict.item() if scalar else verdict,
        reason=Reason(int(reason)) if scalar else reason,
        interval=i_main,
        equivalence=e_main,
        pessimistic=i_pess,
        optimistic=i_opt,
        non_inferior=bool(non_inferior) if scalar else non_inferior,
        non_inferiority_bound=float(bound) if scalar else bound,
        method=int(main.method) if scalar else main.method,
        bounded=bool(np.all(bounded)) if scalar else np.broadcast_to(bounded, np.shape(verdict)),
        confidence=confidence,
        min_effect=float(min_effect),
    )
