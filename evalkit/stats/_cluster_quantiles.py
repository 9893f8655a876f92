"""Quantiles of clustered observations and a two-stage cluster bootstrap of their differences.

Observations (turn latencies) nest in conversations, which nest in cells; turns of one
conversation are not independent, nor are conversations of one cell, so the bootstrap resamples
the design, not the turns: cells with replacement, then conversations with replacement within
each drawn cell, each conversation keeping all its turns (the two-stage bootstrap for
hierarchical data, Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §3.8;
Field & Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3)). Resampling at both stages
counts the within-cell variation a second time, so the interval errs wide: that is the price of
staying valid with few cells (the demo's grid has 18), where resampling cells alone undercovers.

When both sides ran the same cells, the same cell draw serves both (a paired bootstrap over
cells), so what a cell does to both sides (a long context, a talkative persona) cancels.
``scipy.stats.bootstrap`` resamples one level only, hence this module; its percentile interval
is the one scipy calls ``"percentile"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["ClusteredSample", "cluster_quantile_difference", "weighted_quantiles"]

#: weight-matrix cells per chunk of resamples (memory stays near 160 MB at most)
_CHUNK_CELLS = 20_000_000


@dataclass(frozen=True)
class ClusteredSample:
    """One side: ``values`` (one per observation), the ``conversation`` (0..n-1) each belongs
    to, and the ``cell`` (index into the shared cell list) of each conversation."""

    values: NDArray[np.float64]
    conversation: NDArray[np.intp]
    cell: NDArray[np.intp]

    @classmethod
    def build(
        cls, values: NDArray[np.float64], conversation: NDArray[np.intp], cell: NDArray[np.intp]
    ) -> ClusteredSample:
        """From per-observation arrays: ``conversation`` codes (any integers) and ``cell``
        codes (indexes into the shared cell list; the same for all of a conversation)."""
        keys, first, codes = np.unique(conversation, return_index=True, return_inverse=True)
        del keys
        return cls(
            np.asarray(values, dtype=np.float64),
            codes.astype(np.intp),
            np.asarray(cell, dtype=np.intp)[first],
        )


def weighted_quantiles(
    sorted_values: NDArray[np.float64], weights: NDArray[np.int64], quantiles: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Quantiles of ``sorted_values`` under integer ``weights`` (one row per resample): the
    smallest value whose cumulative weight reaches ``q`` of the total (numpy's
    ``"inverted_cdf"``). Returns shape ``(rows, len(quantiles))``; a row of zero weight: NaN."""
    cum = np.cumsum(weights, axis=1)
    total = cum[:, -1]
    out = np.empty((weights.shape[0], len(quantiles)))
    last = len(sorted_values) - 1
    for j, q in enumerate(quantiles):
        target = q * total
        index = np.minimum((cum < target[:, None]).sum(axis=1), last)
        out[:, j] = sorted_values[index]
    out[total == 0] = np.nan
    return out


def _two_stage_counts(
    sample: ClusteredSample, cell_draws: NDArray[np.int64], rng: np.random.Generator
) -> NDArray[np.int64]:
    """How often each conversation is drawn in each resample (rows), given how often each
    cell was drawn (``cell_draws``: resamples x cells)."""
    rows = cell_draws.shape[0]
    counts = np.zeros((rows, len(sample.cell)), dtype=np.int64)
    for cell in np.unique(sample.cell):
        members = np.flatnonzero(sample.cell == cell)
        size = len(members)
        counts[:, members] = rng.multinomial(cell_draws[:, cell] * size, np.full(size, 1 / size))
    return counts


def cluster_quantile_difference(
    baseline: ClusteredSample,
    candidate: ClusteredSample,
    n_cells: int,
    quantiles: Sequence[float],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(baseline, candidate, differences)``: each side's quantiles (shape ``(k,)``) and the
    bootstrap distribution of candidate - baseline (shape ``(n_resamples, k)``).

    Each resample draws ``n_cells`` cells with replacement from the shared cell list (the
    same draw for both sides), then within every drawn cell as many conversations as the cell
    holds on that side, with replacement; a conversation brings all its observations.
    """
    qs = np.asarray(quantiles, dtype=np.float64)
    rng = np.random.default_rng(seed)
    sides = (baseline, candidate)
    order = [np.argsort(s.values, kind="stable") for s in sides]
    sorted_values = [s.values[o] for s, o in zip(sides, order, strict=True)]
    owners = [s.conversation[o] for s, o in zip(sides, order, strict=True)]
    point = [
        weighted_quantiles(v, np.ones((1, len(v)), dtype=np.int64), qs)[0] for v in sorted_values
    ]
    widest = max(len(v) for v in sorted_values)
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(widest, 1)))
    differences = np.empty((n_resamples, len(qs)))
    done = 0
    while done < n_resamples:
        rows = min(chunk, n_resamples - done)
        cell_draws = rng.multinomial(n_cells, np.full(n_cells, 1 / n_cells), size=rows)
        estimates = []
        for side, values, owner in zip(sides, sorted_values, owners, strict=True):
            counts = _two_stage_counts(side, cell_draws, rng)
            estimates.append(weighted_quantiles(values, counts[:, owner], qs))
        differences[done : done + rows] = estimates[1] - estimates[0]
        done += rows
    return point[0], point[1], differences
