"""Grid means and paired grid differences from per-cell moments (repeats reduced first).

The grid is a fixed set of cells (persona x variables x context) and the estimand is the grid
average: the mean over cells of each cell's expected score; a difference pairs the cells both
sides scored. Which variance the interval rests on depends on the design, and
:func:`paired_grid` says which it used (:class:`VarianceMethod`):

``within_cells``
    When the repeats carry the noise: each side's variance between repeats of a cell is
    pooled over its cells (``sum((n_c - 1) s2_c) / sum(n_c - 1)``, with ``sum(n_c - 1)``
    degrees of freedom counted once, however many single-repeat cells borrow it), the grid
    mean's variance is ``pooled * sum(1 / n_c) / C**2``, and the two sides combine with
    Welch-Satterthwaite degrees of freedom. Chosen when every side has at least as many
    within-cell degrees of freedom as the cell-differences method would (``C - 1``).
``paired_cells``
    When they do not (one repeat per cell, or too few repeated cells to pool): a paired
    analysis of the ``C`` cell differences, ``var(d_c) / C`` with ``C - 1`` degrees of
    freedom. Exact for cells drawn from a population, conservative for a fixed grid (the
    spread of cell differences holds the repeat noise and any cell-by-version interaction).
``none``
    One paired cell and no repeats on a side: no interval exists; bounds are NaN and
    callers say so in words.

Observed zero spread is not zero uncertainty: each side's per-conversation variance has a
floor, the variance of a Bernoulli score at the side's Jeffreys-smoothed mean with one
pseudo degree of freedom (``p~ (1 - p~) / (df + 1)``, ``p~ = (x + 1/2) / (N + 1)``), which
only matters when the repeats (almost) all agree. Limits come from a Wilson interval per side
with the effective sample size and the MOVER recombination (:mod:`._bounded`), so a
difference of pass rates stays within ``[-100, +100]`` points.

All functions are vectorised: arrays may carry leading batch axes (simulated trials, rules,
personas); the last axis is the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bounded import mover_difference, side_limits, t_quantile

__all__ = [
    "CellMoments",
    "Interval",
    "PairedGrid",
    "VarianceMethod",
    "choose_method",
    "grid_mean",
    "paired_difference",
    "paired_grid",
    "t_interval",
]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


class VarianceMethod(IntEnum):
    """Where an interval's variance came from (codes in :attr:`Interval.method`)."""

    NONE = 0
    WITHIN_CELLS = 1
    PAIRED_CELLS = 2

    @property
    def label(self) -> str:
        return ("none", "within_cells", "paired_cells")[self.value]


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
    """An estimate with its two-sided interval, standard error, degrees of freedom and the
    :class:`VarianceMethod` code that gave the variance (None when not recorded)."""

    estimate: Any
    low: Any
    high: Any
    se: Any
    df: Any
    method: Any = None

    def as_dict(self) -> dict[str, float]:
        """Scalar fields as plain floats (for one-row summaries and JSON)."""
        return {k: float(getattr(self, k)) for k in ("estimate", "low", "high", "se", "df")}


def _scalar(x: ArrayLike) -> Any:
    a = np.asarray(x)
    return a.item() if a.ndim == 0 else a


def t_interval(
    estimate: ArrayLike, variance: ArrayLike, df: ArrayLike, confidence: float
) -> Interval:
    """``estimate +- t(df) * sqrt(variance)`` (unbounded; no variance floor)."""
    est = np.asarray(estimate, dtype=np.float64)
    se = np.sqrt(np.asarray(variance, dtype=np.float64))
    dof = np.asarray(df, dtype=np.float64)
    half = t_quantile(confidence, dof) * se
    return Interval(
        _scalar(est), _scalar(est - half), _scalar(est + half), _scalar(se), _scalar(dof)
    )


@dataclass(frozen=True)
class _Side:
    """One side's grid mean over the kept cells, on the unit scale, with its design pieces."""

    mean: FloatArray  # grid mean (unit scale)
    smoothed: FloatArray  # Jeffreys-smoothed mean, for the floor and the Wilson interval
    within_df: FloatArray  # sum(n_c - 1) over kept cells
    within_var: FloatArray  # pooled per-conversation variance (unit scale), NaN when df 0
    inverse_n: FloatArray  # sum(1 / n_c) over kept cells
    cell_means: FloatArray  # (..., C) unit scale, NaN outside kept cells

    bounded: bool

    @classmethod
    def of(cls, m: CellMoments, keep: BoolArray, cells: FloatArray, scale: float | None) -> _Side:
        bounded = scale is not None
        scale = 1.0 if scale is None else scale
        n = np.where(keep, m.n, 0.0)
        dof = np.where(n > 1, n - 1.0, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_means = np.where(keep, m.mean / scale, np.nan)
            mean = np.where(keep, cell_means, 0.0).sum(axis=-1) / cells
            conversations = n.sum(axis=-1)
            smoothed = (mean * conversations + 0.5) / (conversations + 1.0)
            within_df = dof.sum(axis=-1)
            sum_sq = np.where(dof > 0, m.var / (scale * scale) * dof, 0.0).sum(axis=-1)
            within_var = np.where(within_df > 0, sum_sq / within_df, np.nan)
            inverse_n = np.where(keep, 1.0 / n, 0.0).sum(axis=-1)
        return cls(mean, smoothed, within_df, within_var, inverse_n, cell_means, bounded)

    def floor(self, df: ArrayLike) -> FloatArray:
        """Per-conversation variance floor: Bernoulli at the smoothed mean, one pseudo df
        (zero on an unbounded scale, where no such floor exists)."""
        if not self.bounded:
            return np.zeros(np.shape(self.mean))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.smoothed * (1.0 - self.smoothed) / (np.asarray(df) + 1.0))


def _nan_var(x: FloatArray, cells: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(x, axis=-1, keepdims=True) / cells[..., None]
        return np.asarray(np.nansum((x - mean) ** 2, axis=-1) / (cells - 1.0))


@dataclass(frozen=True)
class PairedGrid:
    """Candidate minus baseline over the paired cells, ready to give intervals at any level.

    Means and variances are on the unit scale (a score of ``scale`` is 1); :meth:`interval`
    scales back. ``scale`` None: values are unbounded, limits are plain t limits. ``method``
    holds :class:`VarianceMethod` codes.
    """

    scale: float | None
    cells: FloatArray
    baseline_mean: FloatArray
    candidate_mean: FloatArray
    baseline_smoothed: FloatArray
    candidate_smoothed: FloatArray
    baseline_var: FloatArray  # variance of the side's grid mean (unit scale)
    candidate_var: FloatArray
    correlation: FloatArray
    df: FloatArray
    method: NDArray[np.int64]

    @property
    def _unit(self) -> float:
        return 1.0 if self.scale is None else self.scale

    @property
    def estimate(self) -> FloatArray:
        return np.asarray(self._unit * (self.candidate_mean - self.baseline_mean))

    @property
    def variance(self) -> FloatArray:
        """Variance of the difference (points squared)."""
        with np.errstate(invalid="ignore"):
            cross = 2.0 * self.correlation * np.sqrt(self.baseline_var * self.candidate_var)
            return np.asarray(
                self._unit**2 * np.maximum(self.baseline_var + self.candidate_var - cross, 0.0)
            )

    def interval(self, confidence: float = 0.95) -> Interval:
        """The two-sided interval at ``confidence`` (NaN bounds where the method is none)."""
        q = t_quantile(confidence, self.df)
        if self.scale is None:
            half = q * np.sqrt(self.variance)
            low, high = self.estimate - half, self.estimate + half
        else:
            cand = side_limits(self.candidate_mean, self.candidate_var, q, self.candidate_smoothed)
            base = side_limits(self.baseline_mean, self.baseline_var, q, self.baseline_smoothed)
            low, high = mover_difference(
                (self.candidate_mean, *cand), (self.baseline_mean, *base), self.correlation
            )
            low, high = self.scale * low, self.scale * high
        none = self.method == VarianceMethod.NONE
        return Interval(
            estimate=_scalar(self.estimate),
            low=_scalar(np.where(none, np.nan, low)),
            high=_scalar(np.where(none, np.nan, high)),
            se=_scalar(np.where(none, np.nan, np.sqrt(self.variance))),
            df=_scalar(self.df),
            method=_scalar(self.method),
        )

    def lower_bound(self, confidence: float = 0.95) -> Any:
        """One-sided lower confidence bound at ``confidence`` (non-inferiority)."""
        return self.interval(2.0 * confidence - 1.0).low


def choose_method(within_df: tuple[FloatArray, FloatArray], cells: FloatArray) -> NDArray[np.int64]:
    """The design's variance method: within cells when every side's repeats give at least as
    many degrees of freedom as the cell differences would (and at least one); otherwise
    paired cells when two or more cells are paired; otherwise none."""
    enough = np.minimum(*within_df) >= np.maximum(cells - 1.0, 1.0)
    return np.asarray(
        np.select(
            [enough, cells >= 2],
            [VarianceMethod.WITHIN_CELLS, VarianceMethod.PAIRED_CELLS],
            VarianceMethod.NONE,
        ),
        dtype=np.int64,
    )


def paired_grid(
    baseline: CellMoments,
    candidate: CellMoments,
    *,
    scale: float | None = 100.0,
    method: VarianceMethod | None = None,
) -> PairedGrid:
    """Candidate minus baseline over the cells both sides have (see the module docstring).

    Values lie in ``[0, scale]`` (scores, or pass rates as 0/100); ``scale`` None treats them
    as unbounded (plain t limits, no variance floor). ``method`` forces a variance method (None: the design chooses, :func:`choose_method`); a
    forced method the design cannot carry falls back to none.
    """
    keep = (baseline.n > 0) & (candidate.n > 0)
    cells = keep.sum(axis=-1).astype(np.float64)
    b = _Side.of(baseline, keep, cells, scale)
    c = _Side.of(candidate, keep, cells, scale)
    auto = choose_method((b.within_df, c.within_df), cells)
    if method is None:
        chosen = auto
    else:
        possible = (
            (np.minimum(b.within_df, c.within_df) >= 1)
            if method == VarianceMethod.WITHIN_CELLS
            else cells >= 2
        )
        chosen = np.where(possible, int(method), int(VarianceMethod.NONE)).astype(np.int64)

    with np.errstate(invalid="ignore", divide="ignore"):
        # within cells: pooled repeat variance per side, floored, over C**2
        w_var = [
            np.maximum(s.within_var, s.floor(s.within_df)) * s.inverse_n / cells**2 for s in (b, c)
        ]
        w_df = (w_var[0] + w_var[1]) ** 2 / (
            w_var[0] ** 2 / b.within_df + w_var[1] ** 2 / c.within_df
        )
        # paired cells: spread of cell means and of cell differences over C
        floors = [s.floor(cells - 1.0) * s.inverse_n / cells**2 for s in (b, c)]
        p_var = [
            np.maximum(_nan_var(s.cell_means, cells) / cells, f)
            for s, f in zip((b, c), floors, strict=True)
        ]
        d_var = np.maximum(
            _nan_var(c.cell_means - b.cell_means, cells) / cells, floors[0] + floors[1]
        )
        p_corr = np.clip(
            (p_var[0] + p_var[1] - d_var) / (2.0 * np.sqrt(p_var[0] * p_var[1])), -1.0, 1.0
        )
    within = chosen == VarianceMethod.WITHIN_CELLS
    paired = chosen == VarianceMethod.PAIRED_CELLS
    nan = np.full(np.shape(cells), np.nan)
    return PairedGrid(
        scale=scale,
        cells=cells,
        baseline_mean=b.mean,
        candidate_mean=c.mean,
        baseline_smoothed=b.smoothed,
        candidate_smoothed=c.smoothed,
        baseline_var=np.select([within, paired], [w_var[0], p_var[0]], nan),
        candidate_var=np.select([within, paired], [w_var[1], p_var[1]], nan),
        correlation=np.select([within, paired], [np.zeros_like(cells), p_corr], nan),
        df=np.select([within, paired], [np.where(np.isnan(w_df), np.inf, w_df), cells - 1.0], nan),
        method=chosen,
    )


def paired_difference(
    baseline: CellMoments,
    candidate: CellMoments,
    confidence: float = 0.95,
    *,
    scale: float | None = None,
) -> Interval:
    """Candidate minus baseline over the cells both sides have, with its interval
    (:func:`paired_grid`; ``scale`` None: unbounded values)."""
    return paired_grid(baseline, candidate, scale=scale).interval(confidence)


def grid_mean(m: CellMoments, confidence: float = 0.95, *, scale: float | None = None) -> Interval:
    """Mean over cells of the cell means, with its interval (cells with no repeat skipped).

    The same design rule as :func:`paired_grid`: pooled repeats when they give at least
    ``C - 1`` degrees of freedom, else the spread of cell means, else no interval. Values
    lie in ``[0, scale]`` (bounded limits and a variance floor), or are unbounded (None).
    """
    keep = m.n > 0
    cells = keep.sum(axis=-1).astype(np.float64)
    s = _Side.of(m, keep, cells, scale)
    enough = s.within_df >= np.maximum(cells - 1.0, 1.0)
    chosen = np.select(
        [enough, cells >= 2], [VarianceMethod.WITHIN_CELLS, VarianceMethod.PAIRED_CELLS], 0
    ).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        w_var = np.maximum(s.within_var, s.floor(s.within_df)) * s.inverse_n / cells**2
        c_var = np.maximum(
            _nan_var(s.cell_means, cells) / cells, s.floor(cells - 1.0) * s.inverse_n / cells**2
        )
    var = np.select([chosen == 1, chosen == 2], [w_var, c_var], np.nan)
    df = np.select([chosen == 1, chosen == 2], [s.within_df, cells - 1.0], np.nan)
    q = t_quantile(confidence, df)
    if scale is None:
        unit = 1.0
        low, high = s.mean - q * np.sqrt(var), s.mean + q * np.sqrt(var)
    else:
        unit = scale
        low, high = side_limits(s.mean, var, q, s.smoothed)
    return Interval(
        estimate=_scalar(unit * s.mean),
        low=_scalar(unit * low),
        high=_scalar(unit * high),
        se=_scalar(unit * np.sqrt(var)),
        df=_scalar(df),
        method=_scalar(chosen),
    )
