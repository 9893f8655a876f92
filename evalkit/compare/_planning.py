"""Planning before spending: repeats (or cells) a grid needs to detect an effect."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..stats import grid_difference_se, minimum_detectable_effect, paired_df
from ._sides import Side, unique_values

__all__ = ["RepeatPlan", "plan_repeats"]

_MAX_SIZE = 10_000


@dataclass(frozen=True)
class RepeatPlan:
    """How big a paired grid must be to detect ``effect`` points with ``power``.

    ``repeats_per_cell``: repeats a side at the pilot's number of cells; ``cells``: cells
    needed at the pilot's repeats (``None`` when more than 10,000). ``within_sd`` is the pooled
    spread of one conversation's score between repeats of a cell (the noise that matters for a
    paired comparison; ``between_cell_sd``, how much cells differ, cancels out in pairing).
    """

    effect: float
    power: float
    confidence: float
    within_sd: float
    between_cell_sd: float
    pilot_cells: int
    pilot_repeats: int
    pilot_mde: float
    repeats_per_cell: int | None
    cells: int | None

    @property
    def conversations_per_side(self) -> int | None:
        """Conversations a side with the planned repeats on the pilot's cells."""
        return None if self.repeats_per_cell is None else self.repeats_per_cell * self.pilot_cells

    def __str__(self) -> str:
        level = round(100 * self.confidence)
        return (
            f"To detect {self.effect:g} points with {self.power:.0%} power ({level}% two-sided): "
            f"{self.repeats_per_cell} repeats per cell on {self.pilot_cells} cells "
            f"({self.conversations_per_side} conversations a side), or {self.cells} cells at "
            f"{self.pilot_repeats} repeats. Pilot: within-cell sd {self.within_sd:.1f}, "
            f"between-cell sd {self.between_cell_sd:.1f}, detects {self.pilot_mde:.1f} points."
        )


def _mde(sd: float, cells: int, repeats: int, confidence: float, power: float) -> float:
    return minimum_detectable_effect(
        grid_difference_se(sd, cells, repeats), paired_df(cells, repeats), confidence, power
    )


def _search(
    sd: float, effect: float, fixed: int, vary_repeats: bool, confidence: float, power: float
) -> int | None:
    """Smallest size (repeats >= 2, or cells >= 1) whose MDE is at most ``effect``."""

    def mde(size: int) -> float:
        cells, repeats = (fixed, size) if vary_repeats else (size, fixed)
        return _mde(sd, cells, repeats, confidence, power)

    low = 2 if vary_repeats else 1
    if sd == 0.0:
        return low
    high = low
    while not mde(high) <= effect:
        high *= 2
        if high > _MAX_SIZE:
            return None
    while low < high:  # the MDE falls as the size grows
        mid = (low + high) // 2
        if mde(mid) <= effect:
            high = mid
        else:
            low = mid + 1
    return high


def plan_repeats(
    pilot: pd.DataFrame, effect: float = 10.0, power: float = 0.9, confidence: float = 0.95
) -> RepeatPlan:
    """Plan a paired comparison from a pilot's grades frame (its noise within and between cells).

    The arithmetic is the one behind ``Comparison.summary``'s minimum detectable effect
    (:func:`evalkit.stats.minimum_detectable_effect`), with the pilot's pooled within-cell
    spread standing in for both sides.
    """
    if effect <= 0:
        raise ValueError("effect must be > 0")
    cells_ids = unique_values(pilot["cell_id"])
    moments = Side.build(pilot, cells_ids, "pilot").cell_moments(len(cells_ids))
    dof = np.where(moments.n > 1, moments.n - 1.0, 0.0)
    if dof.sum() == 0:
        raise ValueError("the pilot needs at least one cell with two scored repeats")
    within = float(np.sqrt(np.nansum(np.where(dof > 0, moments.var, 0.0) * dof) / dof.sum()))
    means = moments.mean[moments.n > 0]
    between = float(np.std(means, ddof=1)) if means.size > 1 else math.nan
    n_cells = int((moments.n > 0).sum())
    repeats = round(float(np.median(moments.n[moments.n > 0])))
    return RepeatPlan(
        effect=float(effect),
        power=power,
        confidence=confidence,
        within_sd=within,
        between_cell_sd=between,
        pilot_cells=n_cells,
        pilot_repeats=repeats,
        pilot_mde=_mde(within, n_cells, max(repeats, 2), confidence, power),
        repeats_per_cell=_search(within, effect, n_cells, True, confidence, power),
        cells=_search(within, effect, max(repeats, 2), False, confidence, power),
    )
