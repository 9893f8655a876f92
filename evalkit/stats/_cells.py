"""Grid means and paired differences from per-cell moments (repeats reduced first).

The grid is a fixed set of cells (persona x variables x context) and the estimand is the
grid average: the mean over cells of each cell's expected score. Cell effects are fixed, so the
only noise is between repeats of the same cell, and the variance of a grid mean is
``sum(s2_c / n_c) / C**2`` with ``s2_c`` the variance between the repeats of cell ``c``. That
estimate pools every cell's repeats (2 x C x (R - 1) degrees of freedom for a paired
difference) instead of the C - 1 a t interval on cell differences has, and unlike a
percentile bootstrap over C cell means it does not under-cover. The reference distribution
is Student's t with Welch-Satterthwaite degrees of freedom (cells differ in noise). A cell with
one repeat borrows its side's pooled within-cell variance.

All functions are vectorised: arrays may carry leading batch axes (e.g. simulated trials);
the last axis is the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats  # type: ignore[import-untyped, unused-ignore]

__all__ = ["CellMoments", "Interval", "grid_mean", "paired_difference", "t_interval"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CellMoments:
    """Per-cell repeat count ``n``, ``mean`` and unbiased variance ``var`` (NaN when n < 2).

    Arrays of one shape whose last axis is the cell.
    """

    n: FloatArray
    mean: FloatArray
    var: FloatArray

    @classmethod
    def from_values(cls, values: ArrayLike) -> CellMoments:
        """Moments of ``values`` shaped ``(..., cells, repeats)``; NaN marks a missing repeat."""
        x = np.asarray(values, dtype=np.float64)
        present = ~np.isnan(x)
        n = present.sum(axis=-1).astype(np.float64)
        total = np.where(present, x, 0.0).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / n
            dev = np.where(present, x - mean[..., None], 0.0)
            var = (dev * dev).sum(axis=-1) / (n - 1.0)
        return cls(n=n, mean=np.where(n > 0, mean, np.nan), var=np.where(n > 1, var, np.nan))

    def mask(self, keep: NDArray[np.bool_]) -> CellMoments:
        """These moments with the cells outside ``keep`` emptied (n = 0)."""
        return CellMoments(
            n=np.where(keep, self.n, 0.0),
            mean=np.where(keep, self.mean, np.nan),
            var=np.where(keep, self.var, np.nan),
        )


@dataclass(frozen=True)
class Interval:
    """An estimate with its two-sided interval, standard error and t degrees of freedom."""

    estimate: Any
    low: Any
    high: Any
    se: Any
    df: Any

    def as_dict(self) -> dict[str, float]:
        """Scalar fields as plain floats (for one-row summaries and JSON)."""
        return {k: float(getattr(self, k)) for k in ("estimate", "low", "high", "se", "df")}


def _scalar(x: FloatArray) -> Any:
    return float(x) if np.ndim(x) == 0 else x


def t_interval(
    estimate: ArrayLike, variance: ArrayLike, df: ArrayLike, confidence: float
) -> Interval:
    """``estimate +- t(df) * sqrt(variance)``; zero variance gives a zero-width interval."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    est = np.asarray(estimate, dtype=np.float64)
    var = np.asarray(variance, dtype=np.float64)
    dof = np.asarray(df, dtype=np.float64)
    se = np.sqrt(var)
    with np.errstate(invalid="ignore"):
        q = np.where(var == 0.0, 0.0, stats.t.ppf(0.5 + confidence / 2.0, dof))
    half = q * se
    return Interval(
        estimate=_scalar(est),
        low=_scalar(est - half),
        high=_scalar(est + half),
        se=_scalar(se),
        df=_scalar(dof),
    )


def _filled(m: CellMoments) -> tuple[FloatArray, FloatArray]:
    """Per-cell variance of the cell mean and its degrees of freedom (pooled for n == 1)."""
    dof = np.where(m.n > 1, m.n - 1.0, 0.0)
    pooled_dof = dof.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = (np.where(dof > 0, m.var * dof, 0.0)).sum(axis=-1, keepdims=True) / pooled_dof
        var = np.where(m.n > 1, m.var, np.where(m.n == 1, pooled, np.nan))
        dof_c = np.where(m.n > 1, dof, np.where(m.n == 1, pooled_dof, np.nan))
        return var / m.n, dof_c


def _satterthwaite(
    parts: list[tuple[FloatArray, FloatArray]], keep: NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray]:
    """Sum of the cells' variance parts (over kept cells) and the Welch-Satterthwaite df."""
    total = np.zeros(keep.shape[:-1])
    denom = np.zeros(keep.shape[:-1])
    for a, dof in parts:
        a_k = np.where(keep, a, 0.0)
        total = total + a_k.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            denom = denom + np.where(keep & (a > 0), a * a / dof, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(denom > 0, total * total / denom, np.inf)
    return total, df


def grid_mean(m: CellMoments, confidence: float = 0.95) -> Interval:
    """Mean over cells of the cell means, with its interval (cells with no repeat skipped)."""
    keep = m.n > 0
    cells = keep.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(keep, m.mean, 0.0).sum(axis=-1) / cells
    total, df = _satterthwaite([_filled(m)], keep)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = total / (cells * cells)
    return t_interval(estimate, variance, df, confidence)


def paired_difference(
    baseline: CellMoments, candidate: CellMoments, confidence: float = 0.95
) -> Interval:
    """Candidate minus baseline, averaged over the cells both sides have, with its interval."""
    keep = (baseline.n > 0) & (candidate.n > 0)
    cells = keep.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(keep, candidate.mean - baseline.mean, 0.0).sum(axis=-1) / cells
    total, df = _satterthwaite([_filled(baseline.mask(keep)), _filled(candidate.mask(keep))], keep)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = total / (cells * cells)
    return t_interval(diff, variance, df, confidence)
