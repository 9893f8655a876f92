"""Typical agent latency, candidate against baseline: a paired test over cells on each cell's
mean log latency (the ratio of geometric means), the ``typical`` row of
:func:`~evalkit.compare.compare_latency`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["TYPICAL", "TypicalLatency", "typical_latency"]

#: The ``quantile`` column's name of the typical-latency row.
TYPICAL = "typical"


@dataclass(frozen=True)
class TypicalLatency:
    """The paired cell-level test of typical latency.

    ``differences``: per cell on both sides, the candidate's mean log latency minus the
    baseline's (a cell's shared effect cancels; what each run does in a cell on its own, drift
    included, is the spread these differences show); ``baseline_median``: the baseline's p50,
    the level at which the ratio is read in seconds.
    """

    differences: np.ndarray
    baseline_median: float

    @property
    def cells(self) -> int:
        """Cells with timed answers on both sides (the test's sample size)."""
        return len(self.differences)

    @property
    def ratio(self) -> float:
        """Candidate over baseline typical latency: ``exp`` of the mean cell difference."""
        return math.exp(float(np.mean(self.differences))) if self.cells else math.nan

    def log_interval(self, alpha: float) -> tuple[float, float]:
        """Student's t interval (``cells - 1`` degrees of freedom) of the mean log ratio at
        two-sided level ``alpha``; NaN with fewer than two cells or no spread at all."""
        if self.cells < 2:
            return math.nan, math.nan
        mean = float(np.mean(self.differences))
        se = float(np.std(self.differences, ddof=1)) / math.sqrt(self.cells)
        if not se > 0:
            return math.nan, math.nan
        half = float(stats.t.ppf(1 - alpha / 2, self.cells - 1)) * se
        return mean - half, mean + half

    def ratio_interval(self, alpha: float) -> tuple[float, float]:
        low, high = self.log_interval(alpha)
        return math.exp(low), math.exp(high)

    def summary(self, confidence: float) -> dict[str, float]:
        """``ratio``, ``ratio_low``, ``ratio_high`` (at ``confidence``) and ``cells``."""
        low, high = self.ratio_interval(1 - confidence)
        return {"ratio": self.ratio, "ratio_low": low, "ratio_high": high, "cells": self.cells}

    def seconds_interval(self, alpha: float) -> tuple[float, float]:
        """The ratio interval as a difference in seconds at the baseline median."""
        low, high = self.ratio_interval(alpha)
        return self.baseline_median * (low - 1), self.baseline_median * (high - 1)


def typical_latency(baseline: pd.DataFrame, candidate: pd.DataFrame) -> TypicalLatency:
    """The typical-latency test of two sides (``cell_id`` and ``value`` columns, seconds).

    Each cell's mean log latency per side (answers of 0 s or less have no log and are left
    out), differenced within the cells both sides ran: the paired t test on those
    differences (Student 1908) tests the ratio of geometric means, the multiplicative change
    a slower model or a longer prompt makes to every answer, with the cell as the unit.
    """
    means = []
    for side in (baseline, candidate):
        positive = side[side["value"] > 0]
        means.append(np.log(positive["value"]).groupby(positive["cell_id"], sort=False).mean())
    both = means[0].index.intersection(means[1].index)
    differences = (means[1].loc[both] - means[0].loc[both]).to_numpy(dtype=np.float64)
    values = baseline["value"].to_numpy(dtype=np.float64)
    median = float(np.quantile(values, 0.5, method="inverted_cdf")) if len(values) else math.nan
    return TypicalLatency(differences, median)
