"""Intervals for proportions and tau-bench's pass^k, vectorised over numpy arrays."""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

__all__ = ["pass_hat_k", "wilson_interval"]

FloatArray = NDArray[np.float64]


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


@overload
def wilson_interval(
    successes: int | float, n: int | float, confidence: float = 0.95
) -> tuple[float, float]: ...
@overload
def wilson_interval(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]: ...
def wilson_interval(successes: Any, n: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval ``(low, high)`` for ``successes`` out of ``n``.

    Scalars give floats, arrays give arrays (broadcast). ``n == 0`` gives ``(nan, nan)``.
    """
    z = _z(confidence)
    x = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if np.any(x < 0) or np.any(x > m):
        raise ValueError("successes must lie in [0, n]")
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / m
        denom = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / denom
        half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
    low = np.where(m > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
    high = np.where(m > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


@overload
def pass_hat_k(c: int, n: int, k: int) -> float: ...
@overload
def pass_hat_k(c: ArrayLike, n: ArrayLike, k: ArrayLike) -> FloatArray: ...
def pass_hat_k(c: Any, n: Any, k: Any) -> Any:
    """pass^k = C(c, k) / C(n, k): the chance that k draws without replacement all passed.

    ``c`` passes out of ``n`` tries; NaN when ``n < k`` (too few tries to say). Vectorised.
    """
    cc = np.asarray(c, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    kk = np.asarray(k, dtype=np.float64)
    if np.any(cc < 0) or np.any(cc > nn) or np.any(kk < 0):
        raise ValueError("need 0 <= c <= n and k >= 0")
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = special.comb(cc, kk) / special.comb(nn, kk)
    out = np.where(nn < kk, np.nan, ratio)
    return float(out) if out.ndim == 0 else out
