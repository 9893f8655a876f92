"""Exact binomial statements, vectorised: a one-sided test against a rate, the Clopper-Pearson
interval, and Holm's step-down adjustment of a family of p-values.

What they are for: "this persona makes the rule fail more often than ``threshold``" is a
claim about a rate from a handful of conversations, so it gets an exact test, an exact
interval, and a correction for the number of such claims made at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["binomial_p_above", "clopper_pearson_interval", "holm_adjusted"]


def _counts(successes: ArrayLike, n: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if np.any(x < 0) or np.any(x > m):
        raise ValueError("successes must lie in [0, n]")
    return x, m


def binomial_p_above(successes: ArrayLike, n: ArrayLike, rate: float) -> Any:
    """One-sided exact p-value of ``successes`` out of ``n`` against "the rate is at most
    ``rate``": ``P(X >= successes)`` for ``X ~ Binomial(n, rate)``.

    Valid also when the ``n`` trials have different rates whose mean is at most ``rate``
    (independent, not identically distributed trials): the binomial's upper tail bounds the
    Poisson-binomial's beyond its mean (Hoeffding 1956, Theorem 4), which is where a test at a
    small level rejects. Arrays broadcast; ``n == 0`` gives 1 (no evidence).
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"rate must be in [0, 1), got {rate}")
    x, m = _counts(successes, n)
    p = np.where(m > 0, stats.binom.sf(x - 1.0, m, rate), 1.0)
    p = np.clip(p, 0.0, 1.0)
    return float(p) if np.ndim(p) == 0 else p


def clopper_pearson_interval(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[Any, Any]:
    """The exact (Clopper & Pearson 1934) interval ``(low, high)`` of a binomial rate: beta
    quantiles, never narrower than the truth allows. Arrays broadcast; ``n == 0`` gives
    ``(nan, nan)``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x, m = _counts(successes, n)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x > 0, stats.beta.ppf(tail, x, m - x + 1.0), 0.0)
        high = np.where(x < m, stats.beta.ppf(1.0 - tail, x + 1.0, m - x), 1.0)
    low = np.where(m > 0, low, np.nan)
    high = np.where(m > 0, high, np.nan)
    if np.ndim(low) == 0:
        return float(low), float(high)
    return low, high


def holm_adjusted(p_values: ArrayLike) -> Any:
    """Holm's (1979) step-down adjusted p-values along the last axis: reject where the
    adjusted value is at most the level, and the chance of any false rejection in the family
    stays at most that level whatever the dependence between the tests.

    A NaN is a hypothesis not tested: it stays NaN and is not counted in its family (each
    row of the last axis is one family, of its non-NaN entries)."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim == 0:
        return float(p)
    if p.shape[-1] == 0:
        return p.copy()
    valid = ~np.isnan(p)
    family = valid.sum(axis=-1, keepdims=True)
    filled = np.where(valid, p, np.inf)
    order = np.argsort(filled, axis=-1, kind="stable")
    ranked = np.take_along_axis(filled, order, axis=-1)
    factor = np.maximum(family - np.arange(p.shape[-1]), 1)
    with np.errstate(invalid="ignore"):
        ranked = np.minimum(np.maximum.accumulate(ranked * factor, axis=-1), 1.0)
    out = np.empty_like(ranked)
    np.put_along_axis(out, order, ranked, axis=-1)
    return np.where(valid, out, np.nan)
