"""Less-used knobs of :func:`evalkit.compare.compare_grades`, grouped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped, unused-ignore]

__all__ = ["CompareOptions"]


@dataclass(frozen=True)
class CompareOptions:
    """Options of a comparison.

    ``pass_threshold``: a conversation "passed the whole scorecard" when its score is at
    least this (100 = every applicable rule passed); ``pass_k``: the k of pass^k per cell
    (None: the smallest cell's repeat count on that side); ``power``: the power the summary's
    minimum detectable effect is stated at; ``record_looks``: :func:`compare_runs` records
    each comparison under the store and warns when runs extend a pair compared before;
    ``exclude_flagged``: the flags of :func:`evalkit.simulation_flags` (of either run or both),
    whose conversations are left out of the comparison, counted in ``summary``
    (``flagged_baseline``, ``flagged_candidate``) and named in ``Comparison.warnings``.
    """

    pass_threshold: float = 100.0
    pass_k: int | None = None
    power: float = 0.9
    record_looks: bool = True
    exclude_flagged: pd.DataFrame | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 < self.power < 1.0:
            raise ValueError("power must be in (0, 1)")
        if self.pass_k is not None and self.pass_k < 1:
            raise ValueError("pass_k must be >= 1")
