"""Intervals that respect a bounded scale: Wilson with an effective sample size, and MOVER.

A mean of scores on ``[0, scale]`` (a pass rate is the special case of 0/100 scores) gets a
Wilson score interval whose sample size is the *effective* one, ``p (1 - p) / variance``: the
number of independent Bernoulli trials that would give the variance the design estimated
(Korn & Graubard 1998, "Confidence intervals for proportions with small expected number of
positive counts estimated from survey data"; the quantile is Student's t at the design's
degrees of freedom). It never leaves ``[0, scale]`` and is never zero-width while the
variance is positive.

A difference of two such means gets the MOVER interval ("method of variance estimates
recovery", Zou & Donner 2008; Newcombe 1998's square-and-add for proportions, with the
correlation term of Newcombe's paired-data method 10): the distances from each mean to its
own limits recovered as variance estimates and recombined. Its limits lie in
``[-scale, +scale]`` for any correlation in ``[-1, 1]``, and in the interior it is the Wald
interval of the difference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = ["effective_wilson", "mover_difference", "side_limits", "t_quantile"]

FloatArray = NDArray[np.float64]


def t_quantile(confidence: float, df: ArrayLike) -> FloatArray:
    """Two-sided Student's t quantile ``t(1 - alpha/2, df)`` (normal for infinite df)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    dof = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.asarray(stats.t.ppf(0.5 + confidence / 2.0, dof), dtype=np.float64)


def effective_wilson(
    mean: ArrayLike, variance: ArrayLike, quantile: ArrayLike, smoothed: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Wilson interval ``(low, high)`` on ``[0, 1]`` for a mean with a design-based variance.

    ``mean`` and ``variance`` are on the unit scale; ``smoothed`` is the mean pulled off the
    bounds (e.g. Jeffreys' ``(x + 0.5) / (n + 1)``), used for the effective sample size when
    the mean sits on a bound (where ``p (1 - p)`` is zero). NaN in, NaN out.
    """
    p = np.asarray(mean, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    q = np.asarray(quantile, dtype=np.float64)
    ps = np.asarray(smoothed, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.maximum(p * (1.0 - p), ps * (1.0 - ps))
        n = spread / v
        q2n = q * q / n
        centre = (p + q2n / 2.0) / (1.0 + q2n)
        half = q / (1.0 + q2n) * np.sqrt(p * (1.0 - p) / n + q2n / (4.0 * n))
        low = np.clip(centre - half, 0.0, 1.0)
        high = np.clip(centre + half, 0.0, 1.0)
    return low, high


def mover_difference(
    candidate: tuple[ArrayLike, ArrayLike, ArrayLike],
    baseline: tuple[ArrayLike, ArrayLike, ArrayLike],
    correlation: ArrayLike = 0.0,
) -> tuple[Any, Any]:
    """MOVER limits of ``candidate - baseline`` from each side's ``(estimate, low, high)``.

    ``correlation`` is that of the two estimates (0 for independent sides).
    """
    p1, l1, u1 = (np.asarray(x, dtype=np.float64) for x in candidate)
    p2, l2, u2 = (np.asarray(x, dtype=np.float64) for x in baseline)
    r = np.clip(np.asarray(correlation, dtype=np.float64), -1.0, 1.0)
    d = p1 - p2
    with np.errstate(invalid="ignore"):
        a, b = p1 - l1, u2 - p2
        low = d - np.sqrt(np.maximum(a * a + b * b - 2.0 * r * a * b, 0.0))
        a, b = u1 - p1, p2 - l2
        high = d + np.sqrt(np.maximum(a * a + b * b - 2.0 * r * a * b, 0.0))
    return low, high


def side_limits(
    mean: ArrayLike, variance: ArrayLike, quantile: ArrayLike, smoothed: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """One side's limits on ``[0, 1]``: the hull of the t (Wald) and the effective-n Wilson
    limits, clipped to the scale.

    In the interior the Wald limits rule (the Wilson interval is a little narrower there when
    the variance is not binomial); near a bound the Wilson limit reaches further into the
    interior, where a Wald interval around a mean on the bound would shrink to nothing.
    """
    p = np.asarray(mean, dtype=np.float64)
    half = np.asarray(quantile, dtype=np.float64) * np.sqrt(np.asarray(variance, dtype=np.float64))
    w_low, w_high = effective_wilson(p, variance, quantile, smoothed)
    with np.errstate(invalid="ignore"):
        low = np.clip(np.minimum(p - half, w_low), 0.0, 1.0)
        high = np.clip(np.maximum(p + half, w_high), 0.0, 1.0)
    return low, high
