"""One side's grades reduced to arrays: conversation scores and per-cell moments.

Works on integer codes and ``numpy.bincount`` rather than pandas groupby, so 1M grade rows
reduce in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from numpy.typing import NDArray

from ..stats import CellMoments

__all__ = ["REQUIRED_COLUMNS", "Side", "codes_for", "moments_by"]

REQUIRED_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "cell_id",
    "rule_id",
    "points",
    "points_awarded",
    "verdict",
)
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def codes_for(values: pd.Series, categories: Sequence[str]) -> IntArray:
    """Positions of ``values`` in ``categories`` (-1 when missing)."""
    return np.asarray(pd.Categorical(values, categories=categories).codes, dtype=np.int64)


def moments_by(groups: IntArray, n_groups: int, cells: IntArray, n_cells: int, values: FloatArray) -> CellMoments:
    """Per (group, cell) moments of ``values`` (NaN ignored), arrays shaped ``(n_groups, n_cells)``."""
    ok = ~np.isnan(values) & (cells >= 0) & (groups >= 0)
    index = groups[ok] * n_cells + cells[ok]
    x = values[ok]
    size = n_groups * n_cells
    n = np.bincount(index, minlength=size).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(index, weights=x, minlength=size) / n
        dev = x - mean[index]
        var = np.bincount(index, weights=dev * dev, minlength=size) / (n - 1.0)
    shape = (n_groups, n_cells)
    return CellMoments(
        n=n.reshape(shape),
        mean=np.where(n > 0, mean, np.nan).reshape(shape),
        var=np.where(n > 1, var, np.nan).reshape(shape),
    )


@dataclass(frozen=True)
class Side:
    """A grades frame as arrays: rows (rule x conversation) and conversations."""

    rows: pd.DataFrame
    row_cell: IntArray
    row_conversation: IntArray
    conversation_cell: IntArray
    scores: FloatArray  # per conversation, NaN when no rule applied

    @classmethod
    def build(cls, grades: pd.DataFrame, cells: Sequence[str], name: str) -> Side:
        missing = [c for c in REQUIRED_COLUMNS if c not in grades.columns]
        if missing:
            raise ValueError(f"{name} grades lack columns {missing}")
        row_cell = codes_for(grades["cell_id"], cells)
        row_conv, uniques = pd.factorize(grades["conversation_id"], sort=False)
        row_conv = np.asarray(row_conv, dtype=np.int64)
        n_conv = len(uniques)
        verdict = grades["verdict"].to_numpy(dtype=object)
        applicable = (verdict == "pass") | (verdict == "fail")
        points = grades["points"].to_numpy(dtype=np.float64)
        awarded = np.nan_to_num(grades["points_awarded"].to_numpy(dtype=np.float64))
        got = np.bincount(row_conv, weights=np.where(applicable, awarded, 0.0), minlength=n_conv)
        possible = np.bincount(row_conv, weights=np.where(applicable, points, 0.0), minlength=n_conv)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(possible > 0, 100.0 * got / possible, np.nan)
        conv_cell = np.full(n_conv, -1, dtype=np.int64)
        conv_cell[row_conv[::-1]] = row_cell[::-1]
        return cls(
            rows=grades,
            row_cell=row_cell,
            row_conversation=row_conv,
            conversation_cell=conv_cell,
            scores=scores,
        )

    @property
    def n_conversations(self) -> int:
        return len(self.scores)

    def cell_moments(self, n_cells: int) -> CellMoments:
        """Score moments per cell, arrays shaped ``(n_cells,)``."""
        m = moments_by(
            np.zeros(self.n_conversations, dtype=np.int64), 1, self.conversation_cell, n_cells, self.scores
        )
        return CellMoments(n=m.n[0], mean=m.mean[0], var=m.var[0])

    def verdict_count(self, verdict: str) -> int:
        return int((self.rows["verdict"] == verdict).sum())
