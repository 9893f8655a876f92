"""Minimum detectable effect and sample-size arithmetic for a paired grid comparison.

With within-cell standard deviation ``sigma`` (of one conversation's score), ``cells`` cells
and ``repeats`` repeats a cell on each side, the paired grid difference has standard error
``sigma * sqrt(2 / (cells * repeats))``. A two-sided test at ``confidence`` detects a true
effect ``d`` with probability ``power`` when
``d >= (t(1 - alpha/2, df) + t(power, df)) * se``: that threshold is the minimum detectable
effect (MDE). :func:`minimum_detectable_effect` is the one formula both the comparison's
summary and :func:`evalkit.compare.plan_repeats` use.
"""

from __future__ import annotations

import math

from scipy import stats  # type: ignore[import-untyped, unused-ignore]

__all__ = ["grid_difference_se", "minimum_detectable_effect", "paired_df"]


def minimum_detectable_effect(
    se: float, df: float, confidence: float = 0.95, power: float = 0.9
) -> float:
    """Smallest true difference a two-sided test at ``confidence`` finds with ``power``."""
    if not (0.0 < confidence < 1.0 and 0.0 < power < 1.0):
        raise ValueError("confidence and power must be in (0, 1)")
    if math.isnan(se) or math.isnan(df) or df <= 0:
        return float("nan")
    q = stats.t.ppf(0.5 + confidence / 2.0, df) + stats.t.ppf(power, df)
    return float(q * se)


def grid_difference_se(sigma: float, cells: int, repeats: int) -> float:
    """Standard error of a paired grid difference: ``sigma * sqrt(2 / (cells * repeats))``."""
    if cells < 1 or repeats < 1:
        raise ValueError("cells and repeats must be >= 1")
    return sigma * math.sqrt(2.0 / (cells * repeats))


def paired_df(cells: int, repeats: int) -> float:
    """Degrees of freedom of the pooled within-cell variance of a paired grid (both sides)."""
    return float(2 * cells * max(repeats - 1, 0)) or float("nan")
