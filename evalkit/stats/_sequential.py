"""Group-sequential boundaries: alpha spending, beta-spending futility, confidence sequences.

A comparison looked at after each wave of repeats is a sequence of z statistics
``Z_1 .. Z_K`` at information fractions ``t_1 < .. < t_K = 1``; under the canonical joint
distribution (Jennison & Turnbull 2000, ch. 3) the score process ``W(t) = Z_t sqrt(t)`` is a
Brownian motion with drift ``theta`` (the standardised effect at full information). The
functions here work on that process by recursive numerical integration (Armitage, McPherson &
Rowe 1969; Jennison & Turnbull ch. 19):

- :func:`spent_alpha` -- Lan-DeMets (1983) spending functions: O'Brien-Fleming-like
  (``"obf"``), Pocock-like (``"pocock"``) and the Hwang-Shih-DeCani (1990) family (``"hsd"``,
  ``gamma = -4`` is O'Brien-Fleming-like and the default);
- :func:`efficacy_bounds` -- two-sided symmetric critical values ``c_k`` whose first-crossing
  probabilities under no effect equal the spent alpha, look by look (agrees with gsDesign and
  rpact to three decimals);
- :func:`futility_bounds` -- a non-binding futility boundary from a beta-spending function
  ``beta * t**shape`` (Pampallona & Tsiatis 1994; DeMets & Ware): at look ``k``, stop when
  ``|Z_k| < f_k``; non-binding, so the efficacy bounds (computed without it) keep their
  alpha whether or not a team stops;
- :func:`stopping_probabilities` -- per look, the chance of stopping for efficacy (either
  side) or futility, and the expected information used, for a given drift;
- :func:`conditional_power` -- the B-value formula (Lan & Wittes 1988);
- :func:`confidence_sequence_bounds` -- an always-valid boundary (normal mixture; Robbins
  1970, Howard et al. 2021): valid at any looks, chosen in advance or not.

All z statistics are two-sided and symmetric in sign.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

__all__ = [
    "SPENDING_FUNCTIONS",
    "StopProbabilities",
    "conditional_power",
    "confidence_sequence_bounds",
    "efficacy_bounds",
    "futility_bounds",
    "spent_alpha",
    "stopping_probabilities",
]

FloatArray = NDArray[np.float64]
SPENDING_FUNCTIONS = ("hsd", "obf", "pocock")
_GRID = 241  # integration points per continuation interval
_INF = 12.0  # z beyond which no mass is left worth counting


def _fractions(t: ArrayLike) -> FloatArray:
    frac = np.asarray(t, dtype=np.float64)
    if frac.ndim != 1 or frac.size == 0:
        raise ValueError("information fractions must be a non-empty 1-d sequence")
    if np.any(np.diff(frac) <= 0) or frac[0] <= 0 or frac[-1] > 1.0 + 1e-12:
        raise ValueError(f"information fractions must increase within (0, 1], got {frac}")
    return frac


def spent_alpha(
    t: ArrayLike, alpha: float, spending: str = "hsd", gamma: float = -4.0
) -> FloatArray:
    """Cumulative two-sided alpha spent by information fraction ``t`` (Lan-DeMets 1983).

    ``obf``: ``alpha / 2`` per side, each spent by ``2 - 2 Phi(z_{alpha/4} / sqrt(t))``; ``pocock``: ``alpha log(1 + (e - 1) t)``;
    ``hsd``: ``alpha (1 - exp(-gamma t)) / (1 - exp(-gamma))`` (Hwang, Shih & DeCani 1990).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    x = np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)
    if (
        spending == "obf"
    ):  # alpha / 2 per side, each spent by the one-sided O'Brien-Fleming-like function
        with np.errstate(divide="ignore"):
            z = stats.norm.isf(alpha / 4) / np.sqrt(x)
            return np.where(x > 0, 4.0 * stats.norm.sf(z), 0.0)
    if spending == "pocock":
        return np.asarray(alpha * np.log1p((math.e - 1.0) * x), dtype=np.float64)
    if spending == "hsd":
        if gamma == 0:
            return np.asarray(alpha * x, dtype=np.float64)
        return np.asarray(alpha * -np.expm1(-gamma * x) / -np.expm1(-gamma), dtype=np.float64)
    raise ValueError(f"spending must be one of {SPENDING_FUNCTIONS}, got {spending!r}")


@dataclass
class _Density:
    """The sub-density of ``W_k`` on the continuation region, on quadrature points."""

    w: FloatArray  # points on the W scale
    weight: FloatArray  # density times quadrature weight (sums to P(continue))


def _region_points(
    pieces: Sequence[tuple[float, float]], sqrt_t: float
) -> tuple[FloatArray, FloatArray]:
    """Trapezoid points and weights over unions of z intervals, on the W scale."""
    ws, wts = [], []
    for lo, hi in pieces:
        if hi <= lo:
            continue
        z = np.linspace(lo, hi, _GRID)
        h = (hi - lo) / (_GRID - 1)
        wt = np.full(_GRID, h)
        wt[[0, -1]] = h / 2
        ws.append(z * sqrt_t)
        wts.append(wt * sqrt_t)
    if not ws:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(ws), np.concatenate(wts)


def _upper_tail(
    edge_w: float, prev: _Density | None, t: float, t_prev: float, theta: float
) -> float:
    """P(W_t > edge, continued until the previous look)."""
    dt = t - t_prev
    if prev is None:
        return float(stats.norm.sf((edge_w - theta * t) / math.sqrt(t)))
    return float(np.dot(prev.weight, stats.norm.sf((edge_w - prev.w - theta * dt) / math.sqrt(dt))))


def _interval_mass(
    lo_w: float, hi_w: float, prev: _Density | None, t: float, t_prev: float, theta: float
) -> float:
    """P(lo < W_t < hi, continued until the previous look)."""
    return _upper_tail(lo_w, prev, t, t_prev, theta) - _upper_tail(hi_w, prev, t, t_prev, theta)


def _advance(
    prev: _Density | None,
    pieces: Sequence[tuple[float, float]],
    t: float,
    t_prev: float,
    theta: float,
) -> _Density:
    w, wt = _region_points(pieces, math.sqrt(t))
    dt = t - t_prev
    if prev is None:
        dens = stats.norm.pdf((w - theta * t) / math.sqrt(t)) / math.sqrt(t)
    else:
        kernel = stats.norm.pdf((w[:, None] - prev.w[None, :] - theta * dt) / math.sqrt(dt))
        dens = kernel @ prev.weight / math.sqrt(dt)
    return _Density(w, dens * wt)


def _continuation(c: float, f: float) -> list[tuple[float, float]]:
    """``f < |z| < c`` as z intervals (``f <= 0``: the whole ``|z| < c``)."""
    if f <= 0:
        return [(-c, c)]
    if f >= c:
        return []
    return [(-c, -f), (f, c)]


def _crossing_beyond(c: float, *, prev: _Density | None, t: float, t_prev: float) -> float:
    """P(|Z_t| >= c, continued until the previous look) under no effect."""
    return 2.0 * _upper_tail(c * math.sqrt(t), prev, t, t_prev, 0.0)


def _mass_below(f: float, *, prev: _Density | None, t: float, t_prev: float, theta: float) -> float:
    """P(Z_t < f, continued until the previous look) under the drift ``theta``."""
    sq = math.sqrt(t)
    return _interval_mass(-_INF * sq, f * sq, prev, t, t_prev, theta)


def efficacy_bounds(
    t: ArrayLike, alpha: float = 0.05, spending: str = "hsd", gamma: float = -4.0
) -> FloatArray:
    """Two-sided critical values ``c_k`` (``|Z_k| >= c_k`` rejects) for the looks at ``t``.

    Each look spends ``spent_alpha(t_k) - spent_alpha(t_{k-1})`` of the two-sided ``alpha``
    under no effect, given no earlier crossing (Lan-DeMets), by recursive integration.
    """
    frac = _fractions(t)
    cum = spent_alpha(frac, alpha, spending, gamma)
    if frac[-1] >= 1.0 - 1e-12:
        cum[-1] = alpha  # the last look spends what is left, whatever the function
    bounds = np.empty(frac.size)
    prev: _Density | None = None
    t_prev = 0.0
    spent_before = 0.0
    for k, tk in enumerate(frac):
        target = cum[k] - spent_before
        crossing = functools.partial(_crossing_beyond, prev=prev, t=tk, t_prev=t_prev)
        if target <= 1e-15:
            bounds[k] = _INF
        elif crossing(0.0) > target:
            bounds[k] = optimize.brentq(
                lambda c, g=target, h=crossing: h(c) - g, 0.0, _INF, xtol=1e-10
            )
        else:
            bounds[k] = 0.0
        spent_before += crossing(bounds[k])
        prev = _advance(prev, _continuation(bounds[k], 0.0), tk, t_prev, 0.0)
        t_prev = tk
    return bounds


def futility_bounds(
    t: ArrayLike,
    efficacy: ArrayLike,
    theta: float,
    beta: float = 0.1,
    shape: float = 2.0,
) -> FloatArray:
    """Non-binding futility bounds ``f_k`` (stop when ``|Z_k| < f_k``) by beta spending.

    Under the drift ``theta`` (``> 0``: the effect the plan is powered for, in units of the
    full-information standard error), the chance of stopping for futility by look ``k`` is
    ``beta * t_k**shape`` (a power-family spending function; Jennison & Turnbull 2000, 7.3),
    computed one-sided along the alternative (``Z_k < f_k``) so that the two-sided use
    ``|Z_k| < f_k`` stops no more often. The last look's bound is 0 (the final analysis
    decides by the efficacy bound alone). ``f_k`` is never above ``c_k``.
    """
    frac = _fractions(t)
    c = np.asarray(efficacy, dtype=np.float64)
    theta = abs(float(theta))
    cum = beta * frac**shape
    out = np.zeros(frac.size)
    prev: _Density | None = None
    t_prev = 0.0
    spent_before = 0.0
    for k, tk in enumerate(frac):
        if k == frac.size - 1:
            break
        target = cum[k] - spent_before

        mass_below = functools.partial(_mass_below, prev=prev, t=tk, t_prev=t_prev, theta=theta)
        lo, hi = -_INF, float(c[k])
        if target <= 0 or mass_below(lo) >= target:
            f = lo
        elif mass_below(hi) <= target:
            f = hi
        else:
            f = optimize.brentq(lambda x, g=target, h=mass_below: h(x) - g, lo, hi, xtol=1e-9)
        spent_before += mass_below(f)
        out[k] = max(f, 0.0)
        prev = _advance(prev, [(max(f, -_INF), float(c[k]))], tk, t_prev, theta)
        t_prev = tk
    return out


@dataclass(frozen=True)
class StopProbabilities:
    """Per look, the chance of stopping (two-sided efficacy split by sign, futility)."""

    upper: FloatArray  # Z_k >= c_k
    lower: FloatArray  # Z_k <= -c_k
    futility: FloatArray  # |Z_k| < f_k
    reach: FloatArray  # the chance of reaching each look

    @property
    def efficacy(self) -> FloatArray:
        return self.upper + self.lower

    def expected_fraction(self, t: ArrayLike) -> float:
        """Expected information used, as a fraction of the maximum."""
        frac = np.asarray(t, dtype=np.float64)
        stop = self.efficacy + self.futility
        stop = stop.copy()
        stop[-1] = self.reach[-1]  # the last look always stops
        return float(np.dot(stop, frac))


def stopping_probabilities(
    t: ArrayLike, efficacy: ArrayLike, futility: ArrayLike | None = None, theta: float = 0.0
) -> StopProbabilities:
    """The chance of stopping at each look for drift ``theta`` (recursive integration)."""
    frac = _fractions(t)
    c = np.asarray(efficacy, dtype=np.float64)
    f = np.zeros(frac.size) if futility is None else np.asarray(futility, dtype=np.float64)
    upper, lower, fut, reach = (np.zeros(frac.size) for _ in range(4))
    prev: _Density | None = None
    t_prev = 0.0
    for k, tk in enumerate(frac):
        sq = math.sqrt(tk)
        reach[k] = 1.0 if prev is None else float(prev.weight.sum())
        upper[k] = _upper_tail(c[k] * sq, prev, tk, t_prev, theta)
        lower[k] = reach[k] - _upper_tail(-c[k] * sq, prev, tk, t_prev, theta)
        if f[k] > 0:
            fut[k] = _interval_mass(
                -min(f[k], c[k]) * sq, min(f[k], c[k]) * sq, prev, tk, t_prev, theta
            )
        if k < frac.size - 1:
            prev = _advance(prev, _continuation(c[k], f[k]), tk, t_prev, theta)
        t_prev = tk
    return StopProbabilities(upper, lower, fut, reach)


def conditional_power(
    z: ArrayLike, t: ArrayLike, theta: ArrayLike, final_bound: float
) -> FloatArray:
    """The chance that the final look crosses ``final_bound`` in the direction of ``theta``
    given ``Z_t = z`` and drift ``theta`` from here on (the B-value; Lan & Wittes 1988);
    earlier crossings ignored. At ``t = 1`` it is 0 or 1."""
    zz = np.asarray(z, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    th = np.asarray(theta, dtype=np.float64)
    sign = np.where(th >= 0, 1.0, -1.0)
    b = sign * zz * np.sqrt(tt)
    rest = np.maximum(1.0 - tt, 1e-12)
    return np.asarray(
        stats.norm.sf((final_bound - b - np.abs(th) * rest) / np.sqrt(rest)), dtype=np.float64
    )


def confidence_sequence_bounds(
    t: ArrayLike, alpha: float = 0.05, tuned_at: float = 1.0
) -> FloatArray:
    """Always-valid two-sided z bounds at information fractions ``t`` (normal mixture).

    ``|W(t)| >= sqrt((t + r) (log((t + r) / r) + 2 log(1 / alpha)))`` crosses with
    probability at most ``alpha`` over all ``t`` at once (Robbins 1970; Howard, Ramdas,
    McAuliffe & Sekhon 2021, eq. 14), whatever the looks; ``r`` is chosen to make the bound
    tightest at ``tuned_at`` (Lambert-W; Howard et al. 2021, eq. 16). Returned on the z scale.
    """
    frac = np.asarray(t, dtype=np.float64)
    if np.any(frac <= 0):
        raise ValueError("information fractions must be positive")
    la = 2.0 * math.log(1.0 / alpha)
    # minimise the boundary at tuned_at over r: r = tuned_at / (-W_{-1}(-alpha^2/e) - 1)
    w = float(np.real(special.lambertw(-(alpha**2) / math.e, -1)))
    r = tuned_at / (-w - 1.0)
    half = np.sqrt((frac + r) * (np.log((frac + r) / r) + la))
    return np.asarray(half / np.sqrt(frac), dtype=np.float64)
