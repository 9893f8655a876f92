"""The winner's gain: how much better the confirmed arm is, from numbers its choice did not bias.

The arm a sweep confirms was chosen because it looked best on the selection cells, and kept
because its held-out difference was large enough to pass the combination test: both numbers,
read after the fact, overstate its gain (the winner's curse). Two estimates do not:

**Fresh repeats** (:func:`fresh_gain`). The winner and the control run again on new repeats of
every cell, conversations that played no part in choosing or confirming it; their paired grid
difference (:func:`evalkit.stats.paired_grid`) is an ordinary estimate of the winner's gain on
this grid, with an ordinary interval, whatever happened before.

**Selection-adjusted held-out difference** (:func:`adjusted_gain`), when nothing can be re-run
(``compare_variants`` on grades, or a sweep with ``confirm_repeats=0``). Given everything on the
selection cells (which fixes the selected arm and its stage-1 p-value), the held-out difference
``D`` is an independent normal draw ``N(mu, se^2)``, and the win is confirmed exactly when ``D``
exceeds a threshold ``a`` the combination test implies (:func:`confirmation_threshold`). So,
conditioned on confirmation, ``D`` is a normal truncated to ``[a, inf)``; inverting its CDF in
``mu`` gives a median-unbiased estimate and an equal-tailed interval whose coverage holds
conditionally on the selection and the confirmation (conditional inference after selection:
Lee, Sun, Sun & Taylor 2016, *Annals of Statistics* 44:907; Andrews, Kitagawa & McCloskey
2024, "Inference on Winners", *Quarterly Journal of Economics* 139:305; for a significance
filter, Zhong & Prentice 2008, *Biostatistics* 9:621). It uses the held-out cells only and is
wide when the win was narrow: a barely confirmed winner has a barely informative gain. Where
judge errors differ between the arm and the control (the pessimistic p-value also had to pass),
the threshold read is the main scenario's, an approximation.

Everything broadcasts over leading axes (simulated trials).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from ..stats import CellMoments, paired_grid
from ._arms_arrays import arms_arrays
from ._selection import Selection

__all__ = [
    "ADJUSTED",
    "BIASED",
    "FRESH",
    "GAIN_METHODS",
    "FreshGain",
    "ReportedGain",
    "adjusted_gain",
    "conditional_estimate",
    "confirmation_threshold",
    "fresh_gain",
]

FloatArray = NDArray[np.float64]

#: How the reported gain was measured (``gain_method`` in a result's details).
FRESH: Final = "fresh repeats"
ADJUSTED: Final = "held-out cells, selection-adjusted"
BIASED: Final = (
    "none: no fresh repeats or held-out cells, the all-cells difference is selection-biased"
)
GAIN_METHODS: Final = (FRESH, ADJUSTED, BIASED)

_TINY: Final = 1e-15
_LIMIT: Final = 100.0  # a difference of scores lies in [-100, +100] points
_STEPS: Final = 80


def confirmation_threshold(
    closed_p: ArrayLike,
    weights: tuple[float, float],
    alpha: float,
    se: ArrayLike,
    df: ArrayLike,
) -> FloatArray:
    """The held-out difference (points) at and above which the combination test confirms,
    given the stage-1 (selection-cell) closed p-value: ``z2 >= (z_alpha |w| - w1 z1) / w2``
    in the inverse-normal combination, mapped back through the held-out one-sided t test of
    ``se`` and ``df``, and never below 0 (a confirmed winner's held-out difference is
    positive). NaN where the held-out difference has no standard error."""
    w1, w2 = weights
    z1 = stats.norm.isf(np.clip(np.asarray(closed_p, dtype=np.float64), _TINY, 1 - _TINY))
    if w2 <= 0:  # no held-out cells: no held-out difference to condition
        return np.full(np.shape(z1), np.nan)
    z2 = (stats.norm.isf(alpha) * np.hypot(w1, w2) - w1 * z1) / w2
    p2 = np.clip(stats.norm.sf(z2), _TINY, 1 - _TINY)
    with np.errstate(invalid="ignore"):
        t2 = stats.t.isf(p2, np.asarray(df, dtype=np.float64))
        bound = np.asarray(se, dtype=np.float64) * t2
    return np.asarray(np.where(np.isfinite(bound), np.maximum(bound, 0.0), np.nan))


def _upper_share(
    mu: FloatArray, observed: FloatArray, threshold: FloatArray, se: FloatArray
) -> Any:
    """``log P(D >= observed | D >= threshold)`` for ``D ~ N(mu, se^2)``: increasing in mu."""
    return special.log_ndtr((mu - observed) / se) - special.log_ndtr((mu - threshold) / se)


def conditional_estimate(
    observed: ArrayLike,
    se: ArrayLike,
    threshold: ArrayLike,
    confidence: float,
    df: ArrayLike = np.inf,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Median-unbiased estimate and equal-tailed ``confidence`` interval of ``mu`` from one
    draw ``observed`` of ``N(mu, se^2)`` truncated to ``[threshold, inf)`` (module docstring),
    each kept within ``[-100, +100]`` points. With finite ``df`` (the standard error was
    estimated) the interval's normal is widened by ``t(df) / z`` at its level, so that far
    from the threshold it is the t interval (the estimate keeps ``se``). NaN where any input
    is NaN or ``se`` is not positive. Solved by bisection, vectorised."""
    level = 0.5 + confidence / 2.0
    with np.errstate(invalid="ignore"):
        widen = stats.t.ppf(level, np.asarray(df, dtype=np.float64)) / stats.norm.ppf(level)
    d, s, a, w = np.broadcast_arrays(
        np.asarray(observed, dtype=np.float64),
        np.asarray(se, dtype=np.float64),
        np.asarray(threshold, dtype=np.float64),
        widen,
    )
    bad = ~(np.isfinite(d) & np.isfinite(a) & np.isfinite(s) & np.isfinite(w) & (s > 0))
    d = np.where(bad, 0.0, d)
    a = np.where(bad, -1.0, np.minimum(a, d))  # rounding aside, d >= a by design
    s = np.where(bad, 1.0, s)
    w = np.where(bad, 1.0, w)
    alpha = 1.0 - confidence
    out = []
    for share, scale in ((alpha / 2.0, s * w), (0.5, s), (1.0 - alpha / 2.0, s * w)):
        target = np.log(share)
        lo = np.full(d.shape, -_LIMIT - 1.0)
        hi = np.full(d.shape, _LIMIT + 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            for _ in range(_STEPS):
                mid = 0.5 * (lo + hi)
                up = _upper_share(mid, d, a, scale) >= target
                hi = np.where(up, mid, hi)
                lo = np.where(up, lo, mid)
        value = np.clip(0.5 * (lo + hi), -_LIMIT, _LIMIT)
        out.append(np.where(bad, np.nan, value))
    low, estimate, high = out
    return estimate, low, high


def adjusted_gain(
    selection: Selection, confidence: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The selected arm's selection-adjusted held-out difference ``(estimate, low, high)``,
    conditioned on its confirmation (module docstring); NaN where it was not confirmed or
    there are no held-out cells."""
    threshold = confirmation_threshold(
        selection.closed_p,
        selection.weights,
        selection.alpha,
        selection.holdout_se,
        selection.holdout_df,
    )
    est, low, high = conditional_estimate(
        selection.holdout_estimate,
        selection.holdout_se,
        threshold,
        confidence,
        selection.holdout_df,
    )
    keep = np.asarray(selection.confirmed, dtype=bool) & np.isfinite(threshold)
    return tuple(np.where(keep, v, np.nan) for v in (est, low, high))  # type: ignore[return-value]


@dataclass(frozen=True)
class FreshGain:
    """The winner's difference against the control on fresh repeats, with its interval."""

    estimate: float
    low: float
    high: float
    conversations: int  # the fresh conversations of both sides

    def as_row(self) -> dict[str, float]:
        return {
            "fresh_difference": self.estimate,
            "fresh_low": self.low,
            "fresh_high": self.high,
        }


def fresh_gain(
    control: pd.DataFrame, winner: pd.DataFrame, *, confidence: float, conversations: int
) -> FreshGain:
    """The paired grid difference of ``winner`` minus ``control`` grades frames holding only
    the fresh repeats (judge errors left out, as the leaderboard's scores are)."""

    _, _, _, _, data = arms_arrays(("control", control), {"winner": winner})
    c = data.control.left_out
    grid = paired_grid(
        CellMoments(c.n[None, :], c.mean[None, :], c.var[None, :]), data.arms.left_out
    )
    iv = grid.interval(confidence)
    return FreshGain(
        float(np.asarray(iv.estimate).ravel()[0]),
        float(np.asarray(iv.low).ravel()[0]),
        float(np.asarray(iv.high).ravel()[0]),
        conversations,
    )


def _finite(value: Any) -> bool:
    try:
        return bool(np.isfinite(float(value)))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class ReportedGain:
    """The gain a result reports for its winner: how it was measured (one of
    :data:`GAIN_METHODS`, None without a winner) and the estimate with its interval (NaN
    when it is not measured)."""

    method: str | None
    estimate: float
    low: float
    high: float
    fresh_conversations: int = 0

    @classmethod
    def of(cls, row: Mapping[str, Any] | None, method: str | None) -> ReportedGain:
        """The gain of the winner's leaderboard ``row`` measured by ``method``."""
        nan = float("nan")
        prefix = {FRESH: "fresh", ADJUSTED: "adjusted"}.get(str(method))
        if row is None or prefix is None or not _finite(row.get(f"{prefix}_difference")):
            return cls(method if row is not None else None, nan, nan, nan)
        fresh = row.get("fresh_conversations")
        return cls(
            method,
            float(row[f"{prefix}_difference"]),
            float(row[f"{prefix}_low"]),
            float(row[f"{prefix}_high"]),
            int(float(fresh)) if method == FRESH and fresh is not None and _finite(fresh) else 0,
        )

    @property
    def measured(self) -> bool:
        return self.method in (FRESH, ADJUSTED) and _finite(self.estimate)

    def words(self, winner: str, control: str, confidence: float, row: Mapping[str, Any]) -> str:
        """``winner beats control by +x points ...``: the gain and how it was measured."""
        level = f"{100 * confidence:g}%"
        interval = f"{self.low:+.1f} to {self.high:+.1f}"
        if self.measured and self.method == FRESH:
            return (
                f"{winner} beats {control} by {self.estimate:+.1f} points on fresh repeats "
                f"({level} interval {interval}; {self.fresh_conversations} conversations that "
                "played no part in choosing or confirming it)"
            )
        if self.measured:
            return (
                f"{winner} beats {control} by {self.estimate:+.1f} points, its held-out "
                f"difference adjusted for being selected and confirmed ({level} conditional "
                f"interval {interval})"
            )
        return (
            f"{winner} is confirmed above {control}, its gain unmeasured (the all-cells "
            f"difference {float(row['difference']):+.1f} rests on the cells it was chosen on "
            "and is selection-biased upward; hold out cells or run fresh repeats)"
        )
