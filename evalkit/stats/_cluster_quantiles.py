"""Quantiles of clustered observations and cluster bootstraps of their differences.

Observations (turn latencies) nest in conversations, which nest in cells; turns of one
conversation are not independent, nor are conversations of one cell, so a bootstrap resamples
the design, not the turns. Two resampling plans:

- one stage (the default of :func:`evalkit.compare.compare_latency`): cells with replacement,
  each drawn cell bringing all its conversations and turns. This is the cluster bootstrap for
  a statistic of independent clusters (Davison & Hinkley 1997, *Bootstrap Methods and their
  Application*, §3.8, "strategy 1"; Field & Welsh 2007, "Bootstrapping clustered data", JRSS B
  69(3)): its spread counts every source of variation inside a cell once, including what a cell
  does to one side only (a run's drift in that cell). With few cells it is a little narrow,
  the bootstrap's ``(G - 1) / G`` variance and its normal-like tails; the expanded percentile
  interval (:func:`expanded_percentile_interval`, Hesterberg 2015) corrects both.
- two stages: cells, then conversations with replacement within each drawn cell. Resampling
  at both stages counts the within-cell variation a second time (Davison & Hinkley §3.8), so
  the interval errs wide and loses power; kept as the conservative choice.

When both sides ran the same cells, the same cell draw serves both (a paired bootstrap over
cells), so what a cell does to both sides (a long context, a talkative persona) cancels.
``scipy.stats.bootstrap`` resamples independent observations only, hence this module; its
plain percentile interval is the one scipy calls ``"percentile"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = [
    "ClusteredSample",
    "cluster_quantile_difference",
    "expanded_alpha",
    "expanded_percentile_interval",
    "weighted_quantiles",
]

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


def _cell_counts(
    sample: ClusteredSample, cell_draws: NDArray[np.int64], rng: np.random.Generator, stages: int
) -> NDArray[np.int64]:
    """How often each conversation is drawn in each resample: its cell's draw count (one
    stage), or that many times the cell's size drawn among the cell's conversations (two)."""
    if stages == 1:
        return cell_draws[:, sample.cell]
    return _two_stage_counts(sample, cell_draws, rng)


def cluster_quantile_difference(
    baseline: ClusteredSample,
    candidate: ClusteredSample,
    n_cells: int,
    quantiles: Sequence[float],
    *,
    stages: Literal[1, 2] = 1,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(baseline, candidate, differences)``: each side's quantiles (shape ``(k,)``) and the
    bootstrap distribution of candidate - baseline (shape ``(n_resamples, k)``).

    Each resample draws ``n_cells`` cells with replacement from the shared cell list (the
    same draw for both sides); a drawn cell brings all its conversations (``stages=1``), or
    as many conversations as it holds on that side, drawn with replacement within it
    (``stages=2``). A conversation brings all its observations.
    """
    if stages not in (1, 2):
        raise ValueError(f"stages must be 1 or 2, got {stages!r}")
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
            counts = _cell_counts(side, cell_draws, rng, stages)
            estimates.append(weighted_quantiles(values, counts[:, owner], qs))
        differences[done : done + rows] = estimates[1] - estimates[0]
        done += rows
    return point[0], point[1], differences


def expanded_alpha(alpha: float, n_clusters: int) -> float:
    """The two-sided level whose plain percentile interval is Hesterberg's expanded percentile
    interval at ``alpha``: ``2 * Phi(-sqrt(G / (G - 1)) * t(1 - alpha / 2, G - 1))`` for ``G``
    clusters (``alpha`` itself below two clusters)."""
    if n_clusters < 2:
        return alpha
    g = float(n_clusters)
    widened = math.sqrt(g / (g - 1)) * float(stats.t.ppf(1 - alpha / 2, g - 1))
    return float(2 * stats.norm.sf(widened))


def expanded_percentile_interval(
    draws: NDArray[np.float64], alpha: float, n_clusters: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(low, high)`` per column of bootstrap ``draws``: the expanded percentile interval
    (Hesterberg 2015, "What teachers should know about the bootstrap", *The American
    Statistician* 69(4), §4.3). The percentile interval is as narrow as a z interval with the
    bootstrap's ``(G - 1) / G`` variance; reading the draws at the quantiles where a normal
    reaches ``sqrt(G / (G - 1))`` times Student's ``t`` with ``G - 1`` degrees of freedom
    restores the small-sample width, keeping the percentile interval's asymmetry."""
    level = expanded_alpha(alpha, n_clusters)
    low, high = np.nanquantile(draws, [level / 2, 1 - level / 2], axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
