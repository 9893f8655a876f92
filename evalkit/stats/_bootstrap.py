"""A seeded BCa bootstrap interval for the mean of paired differences (scipy does the work)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["paired_bootstrap"]


def paired_bootstrap(
    deltas: ArrayLike, n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of paired differences, BCa interval from ``scipy.stats.bootstrap``.

    NaNs are dropped. Fewer than two values give NaN bounds; identical values give a
    zero-width interval (BCa is undefined there).
    """
    values = np.asarray(deltas, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(values.mean())
    if values.size < 2:
        return mean, float("nan"), float("nan")
    if np.ptp(values) == 0.0:
        return mean, mean, mean
    result = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="BCa",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return mean, float(ci.low), float(ci.high)
