"""The knobs of :func:`evalkit.compare.compare_latency`, in one options object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

from ._options import check_confidence

__all__ = ["LatencyMethod", "LatencyOptions"]

#: How the interval of a quantile difference is drawn (see :class:`LatencyOptions`).
LatencyMethod = Literal["cell_bootstrap", "two_stage_bootstrap"]


@dataclass(frozen=True)
class LatencyOptions:
    """Options of :func:`~evalkit.compare.compare_latency`.

    ``quantiles``: the agent latency quantiles compared, each in (0, 1) (one summary row
    each); ``confidence``: the intervals' two-sided confidence, in (0.5, 1); ``min_effect_s``:
    the smallest difference (seconds) worth acting on, the margin of ``no_difference`` and what
    runs recorded at different times must clear; ``method``: ``"cell_bootstrap"`` (cells with
    replacement, paired, with the expanded percentile interval's small-sample correction; the
    default, calibrated and the more powerful) or ``"two_stage_bootstrap"`` (cells, then
    conversations within cells: counts the within-cell variation twice, so it errs wide);
    ``n_resamples`` (>= 1000: the corrected interval reads the bootstrap's outer 1-2%) and
    ``seed`` of the bootstrap.
    """

    quantiles: tuple[float, ...] = (0.5, 0.95)
    confidence: float = 0.95
    min_effect_s: float = 0.25
    method: LatencyMethod = "cell_bootstrap"
    n_resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        qs = tuple(self.quantiles)
        if not qs or any(
            isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 < q < 1.0 for q in qs
        ):
            raise ValueError(
                f"LatencyOptions.quantiles must be numbers in (0, 1), got {list(qs)!r}"
            )
        object.__setattr__(self, "quantiles", tuple(float(q) for q in qs))
        check_confidence(self.confidence, "LatencyOptions")
        if not (
            isinstance(self.min_effect_s, int | float)
            and self.min_effect_s >= 0
            and math.isfinite(self.min_effect_s)
        ):
            raise ValueError(
                f"LatencyOptions.min_effect_s must be >= 0 seconds, got {self.min_effect_s!r}"
            )
        if self.method not in get_args(LatencyMethod):
            raise ValueError(
                f"LatencyOptions.method must be one of {', '.join(get_args(LatencyMethod))}; "
                f"got {self.method!r}"
            )
        if isinstance(self.n_resamples, bool) or not isinstance(self.n_resamples, int):
            raise TypeError(f"LatencyOptions.n_resamples must be an int, got {self.n_resamples!r}")
        if self.n_resamples < 1000:
            raise ValueError(f"LatencyOptions.n_resamples must be >= 1000, got {self.n_resamples}")
