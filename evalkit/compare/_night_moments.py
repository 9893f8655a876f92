"""A night's conversation scores reduced per cell (count, mean, squared deviations), and the
paired within-night difference of two such nights: what the nightly alarm and the
between-night variance read."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["MIN_WITHIN_DF", "Moments", "Paired", "paired"]

#: Repeats within cells (degrees of freedom) below which a night's variance is not taken from
#: them (the spread across cells is used instead).
MIN_WITHIN_DF: Final = 10


@dataclass(frozen=True)
class Moments:
    """Per cell (sorted ids): count, mean and sum of squared deviations of its scores, and
    the degrees of freedom of those squares (``n - 1``; pooled nights: ``n`` less the
    nights, each night's squares about its own cell mean)."""

    cells: NDArray[np.str_]
    n: NDArray[np.float64]
    mean: NDArray[np.float64]
    ss: NDArray[np.float64]
    df: NDArray[np.float64]

    @classmethod
    def of(cls, cell_ids: NDArray[np.str_], scores: NDArray[np.float64]) -> Moments:
        keep = ~np.isnan(scores)
        cells, codes = np.unique(cell_ids[keep], return_inverse=True)
        x = scores[keep]
        n = np.bincount(codes, minlength=len(cells)).astype(float)
        mean = np.bincount(codes, weights=x, minlength=len(cells)) / np.maximum(n, 1)
        ss = np.bincount(codes, weights=(x - mean[codes]) ** 2, minlength=len(cells)).astype(float)
        return cls(cells, n, mean, ss, np.maximum(n - 1, 0))

    @classmethod
    def of_frame(cls, frame: pd.DataFrame) -> Moments:
        """From a frame of conversation scores (``cell_id``, ``score``)."""
        return cls.of(
            frame["cell_id"].astype(str).to_numpy(dtype=str),
            frame["score"].to_numpy(dtype=np.float64, na_value=np.nan),
        )

    @classmethod
    def pooled(cls, nights: list[Moments]) -> Moments:
        """The nights pooled per cell: each cell's mean over every night's scores, and its
        squares within nights only (how far whole nights differ is the between-night
        variance's part, not the repeats')."""
        first = nights[0].cells
        if all(np.array_equal(m.cells, first) for m in nights[1:]):  # one grid: add up
            n = np.sum([m.n for m in nights], axis=0)
            total = np.sum([m.n * m.mean for m in nights], axis=0)
            ss = np.sum([m.ss for m in nights], axis=0)
            df = np.sum([m.df for m in nights], axis=0)
            return cls(first, n, total / np.maximum(n, 1), ss, df)
        cells = reduce_union([m.cells for m in nights])
        n, total, ss, df = (np.zeros(len(cells)) for _ in range(4))
        for m in nights:
            i = np.searchsorted(cells, m.cells)
            n[i] += m.n
            total[i] += m.n * m.mean
            ss[i] += m.ss
            df[i] += m.df
        return cls(cells, n, total / np.maximum(n, 1), ss, df)

    @property
    def conversations(self) -> int:
        """Scored conversations."""
        return int(self.n.sum())


def reduce_union(arrays: list[NDArray[np.str_]]) -> NDArray[np.str_]:
    """The sorted union of sorted id arrays."""
    return np.unique(np.concatenate(arrays)) if arrays else np.array([], dtype=str)


@dataclass(frozen=True)
class Paired:
    """``new - ref`` paired by cell: the mean of the cell differences (points), its
    within-night standard error ``se`` and degrees of freedom ``df``, the ``cells`` both
    have and the ``method`` of the error (``se`` NaN: too few cells to tell)."""

    difference: float
    se: float
    df: float
    cells: int
    method: str


def paired(ref: Moments, new: Moments) -> Paired | None:
    """The paired difference of two nights (or pooled nights) on the cells both have; None
    when they share none. The error comes from the repeats within cells (pooled over cells,
    as a one-way ANOVA's error term, Welch-Satterthwaite df) when both sides have
    :data:`MIN_WITHIN_DF` of them, else from the spread of the cell differences (the paired
    t)."""
    common, ir, in_ = np.intersect1d(ref.cells, new.cells, assume_unique=True, return_indices=True)
    cells = len(common)
    if cells == 0:
        return None
    n_r, n_n = ref.n[ir], new.n[in_]
    diffs = new.mean[in_] - ref.mean[ir]
    difference = float(diffs.mean())
    df_r, df_n = float(ref.df[ir].sum()), float(new.df[in_].sum())
    if df_r >= MIN_WITHIN_DF and df_n >= MIN_WITHIN_DF:
        a = float(ref.ss[ir].sum()) / df_r * float((1 / n_r).sum())
        b = float(new.ss[in_].sum()) / df_n * float((1 / n_n).sum())
        df = (a + b) ** 2 / (a * a / df_r + b * b / df_n) if a + b > 0 else df_r + df_n
        return Paired(difference, math.sqrt(a + b) / cells, df, cells, "within-cell variance")
    if cells >= 3:
        se = float(diffs.std(ddof=1)) / math.sqrt(cells)
        return Paired(difference, se, cells - 1, cells, "paired t over cells")
    return Paired(difference, math.nan, math.nan, cells, "too few cells")
