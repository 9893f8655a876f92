"""How much whole nights move: the between-night variance of a series' nightly grid mean.

A provider or a judge that drifts a little from night to night shifts every conversation of a
night together; the within-night standard error cannot see it. The series is read as a random
night effect, ``score(night, cell) = cell effect + night effect + noise``, and the night
effect's variance ``tau2`` is estimated by the method of moments from *successive* nights:
each consecutive pair's paired difference ``D`` (on the cells both have) has
``E[D**2] = 2 tau2 + V``, ``V`` its within-night variance (from the repeats within cells, or
from the spread of the cell differences on a grid of one repeat a cell), so

    tau2 = max(0, mean(D**2 - V) / 2)

This is von Neumann's mean square successive difference (von Neumann, Kent, Bellinson & Hart
1941, "The mean square successive difference", *Ann. Math. Statist.* 12: 153-162) less the
part the within-night error already explains, the moving-range estimate of an individuals
chart's sigma (Montgomery, *Introduction to Statistical Quality Control*, 6.4) on the scale of
variances. A lasting change moves one successive difference only, so the estimate can read
every complete night, the flagged ones too: it neither cuts off the low nights (which would
shrink it) nor stays stuck on the nights before a false alarm. A pair far beyond the rest
(a step: a real change, more than :data:`OUTLYING_Z` standard deviations) is left out and
counted, as a Phase I chart's limits are revised without the points beyond them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from ._night_moments import Paired

__all__ = ["OUTLYING_Z", "BetweenNights", "between_nights"]

#: A successive difference beyond this many of its standard deviations is a step (left out).
OUTLYING_Z: Final = 3.5
_REVISIONS: Final = 3
_CHI2_1_MEDIAN: Final = 0.4549364


@dataclass(frozen=True)
class BetweenNights:
    """The between-night variance ``tau2`` (points squared) of a series' nightly grid mean,
    from ``pairs`` successive differences (``left_out`` more left out as steps); ``within``
    is the mean within-night variance of one night's grid mean."""

    tau2: float
    pairs: int
    left_out: int
    within: float

    @property
    def sd(self) -> float:
        """The between-night standard deviation (points)."""
        return math.sqrt(self.tau2)

    @property
    def nights(self) -> int:
        """Nights the estimate read (a pair's two nights; consecutive pairs share one)."""
        return self.pairs + self.left_out + 1

    @property
    def df(self) -> float:
        """Degrees of freedom of the estimate: the mean square successive difference of ``m``
        pairs has the variance of a chi-square on ``2 m**2 / (3 m - 1)`` (von Neumann et al.)."""
        return 2.0 * self.pairs**2 / (3.0 * self.pairs - 1.0)

    def variance_of_tau2(self) -> float:
        """Variance of the estimate, ``2 (tau2 + within)**2 / df``."""
        return 2.0 * (self.tau2 + self.within) ** 2 / self.df


def between_nights(pairs: Sequence[Paired]) -> BetweenNights | None:
    """The estimate from successive nights' paired differences ``pairs`` (oldest first);
    None with fewer than two usable pairs."""
    usable = [p for p in pairs if math.isfinite(p.se)]
    d2 = np.array([p.difference**2 for p in usable])
    v = np.array([p.se**2 for p in usable])
    if len(usable) < 2:
        return None
    # a robust start (the median of a chi-square on 1 df is 0.455), then moments
    tau2 = max(0.0, (float(np.median(d2)) / _CHI2_1_MEDIAN - float(np.median(v))) / 2.0)
    keep = np.ones(len(usable), dtype=bool)
    for _ in range(_REVISIONS):  # leave out the steps, re-estimate, until it settles
        revised = d2 <= OUTLYING_Z**2 * (2.0 * tau2 + v)
        if revised.sum() < 2:
            return None
        tau2 = max(0.0, float((d2[revised] - v[revised]).mean()) / 2.0)
        settled = np.array_equal(revised, keep)
        keep = revised
        if settled:
            break
    return BetweenNights(tau2, int(keep.sum()), int((~keep).sum()), float(v[keep].mean()) / 2.0)
