"""The knobs of a comparison, grouped, and the one check of ``confidence`` and ``min_effect``
that every options object of evalkit (comparisons, sequential plans, history, tuning, the
pipeline, the refine loop) runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CompareOptions", "check_confidence", "check_levels", "check_min_effect"]


def _number(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{field} must be a number, got {value!r}")
    return float(value)


def check_confidence(confidence: float, owner: str) -> None:
    """Refuse a ``confidence`` outside (0.5, 1), naming ``owner``'s field. Above 0.5 because
    the equivalence test of ``no_difference`` runs at ``2 * confidence - 1`` (two one-sided
    tests)."""
    if not 0.5 < _number(confidence, f"{owner}.confidence") < 1.0:
        raise ValueError(f"{owner}.confidence must be in (0.5, 1), got {confidence}")


def check_min_effect(min_effect: float, owner: str) -> None:
    """Refuse a ``min_effect`` (points) below 0 or not finite, naming ``owner``'s field."""
    value = _number(min_effect, f"{owner}.min_effect")
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{owner}.min_effect must be >= 0 points, got {min_effect}")


def check_levels(confidence: float, min_effect: float, owner: str) -> None:
    """The one check of ``confidence`` and ``min_effect`` every comparison and options object
    runs (:func:`check_confidence`, :func:`check_min_effect`)."""
    check_confidence(confidence, owner)
    check_min_effect(min_effect, owner)


@dataclass(frozen=True)
class CompareOptions:
    """Options of a comparison.

    ``confidence``: the interval's two-sided confidence, in (0.5, 1); ``min_effect``: the
    smallest difference (points) worth acting on, the margin of ``no_difference`` and of
    non-inferiority; ``pass_threshold``: a conversation "passed the whole scorecard" when its
    score is at least this (100 = every applicable rule passed); ``pass_k``: the k of pass^k
    per cell (None: the smallest cell's repeat count on that side); ``power``: the power the
    summary's minimum detectable effect is stated at; ``record_looks``:
    :func:`evalkit.compare_runs` records each comparison under the store and warns when runs
    extend a pair compared before; ``exclude_flagged``: the flags of
    :func:`evalkit.simulation_flags` (of either run or both), whose conversations are left out
    of the comparison, counted in ``summary`` (``flagged_baseline``, ``flagged_candidate``)
    and named in ``Comparison.warnings``.
    """

    confidence: float = 0.95
    min_effect: float = 5.0
    pass_threshold: float = 100.0
    pass_k: int | None = None
    power: float = 0.9
    record_looks: bool = True
    exclude_flagged: pd.DataFrame | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_levels(self.confidence, self.min_effect, "CompareOptions")
        if not 0.0 < self.power < 1.0:
            raise ValueError(f"CompareOptions.power must be in (0, 1), got {self.power}")
        if self.pass_k is not None and self.pass_k < 1:
            raise ValueError(f"CompareOptions.pass_k must be >= 1, got {self.pass_k}")
