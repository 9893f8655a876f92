"""Power, minimum detectable effect and sample-size arithmetic for a paired grid comparison.

With within-cell standard deviation ``sigma`` (of one conversation's score), ``cells`` cells
and ``repeats`` repeats a cell on each side, the paired grid difference has standard error
``sigma * sqrt(2 / (cells * repeats))``; the comparison pools each side's repeats, so its t
statistic has ``2 * cells * (repeats - 1)`` degrees of freedom (Welch-Satterthwaite with equal
variances). The power to see a true drop (or gain) ``d`` beyond zero with a two-sided test at
``confidence`` is a noncentral t probability (:func:`power_of`); the minimum detectable effect
(MDE) is the ``d`` at which it reaches the asked power (:func:`minimum_detectable_effect`).
Both the comparison's summary and :func:`evalkit.compare.plan_repeats` use them.

A sigma measured in a pilot is itself uncertain: :func:`expected_power` averages the power
over the sigma the pilot is consistent with (``sigma**2 ~ s**2 * df / chi2(df)``, the
fiducial/Bayesian distribution under a flat prior on log sigma), which is what a plan that
"keeps its promise on average over pilots" needs (Julious & Owen 2006, "Sample size
calculations for clinical studies allowing for uncertainty about the variance").
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

__all__ = [
    "expected_power",
    "grid_difference_se",
    "minimum_detectable_effect",
    "paired_df",
    "power_of",
]

#: Points of the pilot-variance average (Gauss-Legendre on the chi-square's quantiles).
_NODES = 48


def _check(confidence: float, power: float | None = None) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    if power is not None and not 0.0 < power < 1.0:
        raise ValueError("power must be in (0, 1)")


def power_of(effect: float, se: float, df: float, confidence: float = 0.95) -> float:
    """Chance that a two-sided t interval at ``confidence`` excludes zero on the side of a true
    difference ``effect`` (noncentral t with ``df`` degrees of freedom)."""
    _check(confidence)
    if math.isnan(se) or math.isnan(df) or df <= 0 or se <= 0:
        return math.nan
    q = float(stats.t.ppf(0.5 + confidence / 2.0, df))
    return float(stats.nct.sf(q, df, abs(effect) / se))


def minimum_detectable_effect(
    se: float, df: float, confidence: float = 0.95, power: float = 0.9
) -> float:
    """Smallest true difference a two-sided test at ``confidence`` finds with ``power``."""
    _check(confidence, power)
    if math.isnan(se) or math.isnan(df) or df <= 0:
        return float("nan")
    if se == 0:
        return 0.0
    q = stats.t.ppf(0.5 + confidence / 2.0, df) + stats.t.ppf(power, df)
    guess = float(q * se)
    return float(
        optimize.brentq(lambda d: power_of(d, se, df, confidence) - power, guess / 4.0, guess * 4.0)
    )


def expected_power(
    effect: float, se_per_sigma: float, df: float, pilot_df: float, confidence: float = 0.95
) -> float:
    """Power averaged over a pilot's uncertainty about sigma.

    ``se_per_sigma``: the planned design's standard error for a sigma of 1 (times the pilot's
    estimate: pass ``grid_difference_se(s, cells, repeats)``); ``pilot_df``: the degrees of
    freedom behind the pilot's ``s``. Infinite ``pilot_df``: the plain power.
    """
    _check(confidence)
    if not math.isfinite(pilot_df):
        return power_of(effect, se_per_sigma, df, confidence)
    x, w = np.polynomial.legendre.leggauss(_NODES)
    u = 0.5 * (x + 1.0)  # quantile levels in (0, 1)
    ratio = np.sqrt(pilot_df / stats.chi2.ppf(u, pilot_df))  # sigma / s
    if math.isnan(se_per_sigma) or math.isnan(df) or df <= 0 or se_per_sigma <= 0:
        return math.nan
    q = float(stats.t.ppf(0.5 + confidence / 2.0, df))
    powers = stats.nct.sf(q, df, abs(effect) / (se_per_sigma * ratio))
    return float(0.5 * (w * powers).sum())


def grid_difference_se(sigma: float, cells: int, repeats: int) -> float:
    """Standard error of a paired grid difference: ``sigma * sqrt(2 / (cells * repeats))``."""
    if cells < 1 or repeats < 1:
        raise ValueError("cells and repeats must be >= 1")
    return sigma * math.sqrt(2.0 / (cells * repeats))


def paired_df(cells: int, repeats: int) -> float:
    """Degrees of freedom of a paired grid comparison: pooled repeats on both sides
    (``2 * cells * (repeats - 1)``), or the cell differences (``cells - 1``) with one repeat."""
    if repeats > 1:
        return float(2 * cells * (repeats - 1))
    return float(cells - 1) or float("nan")
