"""The comparison's verdict, decided from an interval and the minimum effect (a rule table)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._options import check_min_effect

__all__ = ["VERDICT_RULES", "Verdict", "decide"]


class Verdict(StrEnum):
    """What the interval of the score difference (candidate - baseline) says."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    NO_DIFFERENCE = "no_difference"
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"

    def __str__(self) -> str:
        return self.value


_Test = Callable[[NDArray[np.float64], NDArray[np.float64], float], NDArray[np.bool_]]

#: First matching row wins; no match (or a NaN bound) is ``insufficient_evidence``.
#: ``no_difference`` comes first: an interval inside (-min_effect, +min_effect) rules out any
#: effect worth acting on, even when it also excludes 0. ``improved``/``regressed`` need the
#: interval to exclude 0 and to reach beyond the margin, so a false alarm needs a miss of the
#: interval: at most 1 - confidence of the time.
VERDICT_RULES: tuple[tuple[Verdict, _Test], ...] = (
    (Verdict.NO_DIFFERENCE, lambda low, high, m: (low > -m) & (high < m)),
    (Verdict.IMPROVED, lambda low, high, m: low > 0),
    (Verdict.REGRESSED, lambda low, high, m: high < 0),
)


def decide(low: ArrayLike, high: ArrayLike, min_effect: float) -> Any:
    """The verdict for an interval ``[low, high]``; arrays give an object array of verdicts."""
    check_min_effect(min_effect, "decide")
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        conditions = [test(lo, hi, min_effect) for _, test in VERDICT_RULES]
    picked = np.select(
        conditions,
        [np.asarray(v, dtype=object) for v, _ in VERDICT_RULES],
        default=np.asarray(Verdict.INSUFFICIENT_EVIDENCE, dtype=object),
    )
    return picked.item() if picked.ndim == 0 else picked
