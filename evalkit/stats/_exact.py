"""Fisher's exact test for two proportions, vectorised (the doubling two-sided p-value)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["fisher_exact_p"]


def fisher_exact_p(x1: ArrayLike, n1: ArrayLike, x2: ArrayLike, n2: ArrayLike) -> Any:
    """Two-sided p-value that ``x1 / n1`` and ``x2 / n2`` share one rate (Fisher 1935).

    Conditional on the total, ``x2`` is hypergeometric; the two-sided p-value doubles the
    smaller tail (capped at 1). Arrays broadcast; no count on either side gives 1.
    """
    a, m, b, k = (np.asarray(v, dtype=np.int64) for v in (x1, n1, x2, n2))
    if np.any(a < 0) or np.any(b < 0) or np.any(a > m) or np.any(b > k):
        raise ValueError("counts must lie in [0, n]")
    total, successes = m + k, a + b
    upper = stats.hypergeom.sf(b - 1, total, successes, k)
    lower = stats.hypergeom.cdf(b, total, successes, k)
    p = np.minimum(1.0, 2.0 * np.minimum(upper, lower))
    p = np.where(successes == 0, 1.0, p)
    return float(p) if np.ndim(p) == 0 else p
