"""Degrees of freedom of a judge-corrected comparison.

A corrected score's variance rests on the conversations (hundreds) and on the hand labels (a
few dozen): the labelled pairs' terms carry most of it and the design's degrees of freedom
(repeats within cells, or cells) count conversations. Each label stratum (side x rule x the
judge's verdict, with its labels) contributes a variance in the statistic's units, from each
labelled row's weight in it; :func:`evalkit.stats.label_df` combines them with the rest of the
design's variance by Satterthwaite (1946; Cochran 1977, §5.4), and the interval takes those
degrees of freedom.

The weight of a labelled row in a side's grid score is ``100 x points / applicable points``
of its conversation, over ``cells x conversations in its cell``; in a rule's grid pass rate it
is ``100 / (cells x applicable rows of the rule in its cell)``; only paired cells count.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..grading import JudgeCorrection
from ..stats import PairedGrid, label_df
from ._sides import FAIL, PASS, Side, Sides

__all__ = ["rule_degrees", "score_degrees"]

FloatArray = NDArray[np.float64]
Degrees = Callable[[PairedGrid], FloatArray]


def _degrees(
    correction: JudgeCorrection, coefficient: Callable[[int, NDArray[np.int64]], FloatArray]
) -> Degrees:
    variances, labelled, _ = correction.components(coefficient)

    def degrees(grid: PairedGrid) -> FloatArray:
        variance = np.asarray(grid.variance, dtype=np.float64)
        design = np.broadcast_to(np.asarray(grid.df, dtype=np.float64), variance.shape)
        v = variances.reshape((*variance.shape, -1)) if variance.ndim else variances
        out = np.empty(variance.shape)
        for index in np.ndindex(variance.shape):
            out[index] = label_df(float(variance[index]), float(design[index]), v[index], labelled)
        return out

    return degrees


def _possible(side: Side) -> FloatArray:
    """Each conversation's applicable points."""
    points = side.rows["points"].to_numpy(dtype=np.float64)
    applicable = (side.row_verdict == PASS) | (side.row_verdict == FAIL)
    total = np.where(applicable, points, 0.0)
    return np.bincount(side.row_conversation, weights=total, minlength=side.n_conversations).astype(
        np.float64
    )


def _score_weights(
    side: Side, cells: NDArray[np.bool_], n: FloatArray
) -> Callable[[NDArray[np.int64]], FloatArray]:
    """A labelled row's weight in the side's grid score over ``cells`` (``(..., C)``), with
    ``n`` scored conversations per cell."""
    possible = _possible(side)
    points = side.rows["points"].to_numpy(dtype=np.float64)

    def weights(rows: NDArray[np.int64]) -> FloatArray:
        conversation = side.row_conversation[rows]
        cell = side.row_cell[rows]
        inside = np.where(cell >= 0, cells[..., np.maximum(cell, 0)], False)
        count = cells.sum(axis=-1, keepdims=True).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = 100.0 * points[rows] / possible[conversation] / (count * n[np.maximum(cell, 0)])
        return np.where(inside & np.isfinite(w), w, 0.0)

    return weights


def score_degrees(
    sides: Sides, cells: NDArray[np.bool_], correction: JudgeCorrection
) -> Degrees | None:
    """The degrees of freedom of a score difference over ``cells`` (the paired cells, ``(C,)``
    for the headline, or ``(personas, C)`` for each persona's); None when nothing was
    corrected."""
    if not correction.rules:
        return None
    n_cells = len(sides.cells)
    weights = [_score_weights(s, cells, s.cell_moments(n_cells).n) for s in sides.pair]
    return _degrees(correction, lambda i, rows: weights[i](rows))


def rule_degrees(
    sides: Sides, counts: tuple[FloatArray, FloatArray], correction: JudgeCorrection
) -> Degrees | None:
    """Per rule, the degrees of freedom of its pass-rate difference; ``counts``: each side's
    applicable rows per rule and cell (``(rules, C)``)."""
    if not correction.rules:
        return None
    paired = (counts[0] > 0) & (counts[1] > 0)
    n_cells = paired.sum(axis=-1).astype(np.float64)
    n_rules = len(sides.rules)

    def weights(i: int, rows: NDArray[np.int64]) -> FloatArray:
        side = sides.pair[i]
        rule, cell = side.row_rule[rows], side.row_cell[rows]
        ok = (rule >= 0) & (cell >= 0)
        r, c = np.maximum(rule, 0), np.maximum(cell, 0)
        out = np.zeros((n_rules, len(rows)))
        with np.errstate(invalid="ignore", divide="ignore"):
            w = 100.0 / (n_cells[r] * counts[i][r, c])
        keep = ok & paired[r, c] & np.isfinite(w)
        out[r[keep], np.flatnonzero(keep)] = w[keep]
        return out

    return _degrees(correction, weights)
