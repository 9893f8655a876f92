"""Planning before spending: repeats (or cells) a grid needs to detect an effect."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..grading import GradesLike, as_grades_frame
from ..stats import expected_power, grid_difference_se, minimum_detectable_effect, paired_df
from ._options import check_confidence
from ._sides import Side, unique_values

__all__ = ["RepeatPlan", "RepeatPlanOptions", "plan_repeats"]

_MAX_SIZE = 10_000


@dataclass(frozen=True)
class RepeatPlanOptions:
    """Options of :func:`plan_repeats`: the ``effect`` (points, > 0) to detect, the ``power``
    to detect it with, and the ``confidence`` of the comparison it plans."""

    effect: float = 10.0
    power: float = 0.9
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not self.effect > 0:
            raise ValueError(f"RepeatPlanOptions.effect must be > 0 points, got {self.effect}")
        if not 0.0 < self.power < 1.0:
            raise ValueError(f"RepeatPlanOptions.power must be in (0, 1), got {self.power}")
        check_confidence(self.confidence, "RepeatPlanOptions")


@dataclass(frozen=True)
class RepeatPlan:
    """How big a paired grid must be to detect ``effect`` points with ``power``.

    ``repeats_per_cell``: repeats a side at the pilot's number of cells; ``cells``: cells
    needed at the pilot's repeats (``None`` when more than 10,000). ``within_sd`` is the pooled
    spread of one conversation's score between repeats of a cell (the noise that matters for a
    paired comparison; ``between_cell_sd``, how much cells differ, cancels out in pairing),
    measured with ``pilot_df`` degrees of freedom. ``expected_power`` is the power the planned
    repeats give on average over what the pilot says the noise could be; ``assumptions``
    says what the plan took for granted.
    """

    effect: float
    power: float
    confidence: float
    within_sd: float
    between_cell_sd: float
    pilot_cells: int
    pilot_repeats: int
    pilot_df: float
    pilot_mde: float
    repeats_per_cell: int | None
    cells: int | None
    expected_power: float
    assumptions: tuple[str, ...]

    @property
    def conversations_per_side(self) -> int | None:
        """Conversations a side with the planned repeats on the pilot's cells."""
        return None if self.repeats_per_cell is None else self.repeats_per_cell * self.pilot_cells

    def __str__(self) -> str:
        level = round(100 * self.confidence)
        return (
            f"To detect {self.effect:g} points with {self.power:.0%} power ({level}% two-sided): "
            f"{self.repeats_per_cell} repeats per cell on {self.pilot_cells} cells "
            f"({self.conversations_per_side} conversations a side; expected power "
            f"{self.expected_power:.0%}), or {self.cells} cells at {self.pilot_repeats} repeats. "
            f"Pilot: within-cell sd {self.within_sd:.1f} ({self.pilot_df:g} degrees of freedom), "
            f"between-cell sd {self.between_cell_sd:.1f}, detects {self.pilot_mde:.1f} points.\n"
            "Assumed: " + "; ".join(self.assumptions) + "."
        )


def _power(
    sd: float, pilot_df: float, effect: float, cells: int, repeats: int, confidence: float
) -> float:
    return expected_power(
        effect,
        grid_difference_se(sd, cells, repeats),
        paired_df(cells, repeats),
        pilot_df,
        confidence,
    )


def _search(enough: Callable[[int], bool], low: int) -> int | None:
    """Smallest size >= ``low`` for which ``enough`` holds (power grows with the size)."""
    high = low
    while not enough(high):
        high *= 2
        if high > _MAX_SIZE:
            return None
    while low < high:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid + 1
    return high


def plan_repeats(pilot: GradesLike, *, options: RepeatPlanOptions | None = None) -> RepeatPlan:
    """Plan a paired comparison from a pilot's grades (a ``Grades`` or its frame): its noise
    within and between cells. ``options`` (a :class:`RepeatPlanOptions`): the effect, the
    power and the confidence.

    The plan uses the comparison's own arithmetic: repeats pooled within cells on both sides
    (``2 * cells * (repeats - 1)`` degrees of freedom), a noncentral t for the power, and the
    pilot's within-cell spread standing in for both sides, with the power averaged over what
    that spread could be given the pilot's size (:func:`evalkit.stats.expected_power`), so the
    planned repeats deliver the asked power on average over pilots rather than only when the
    pilot happened to guess the noise right.
    """
    opts = options or RepeatPlanOptions()
    effect, power, confidence = opts.effect, opts.power, opts.confidence
    frame = as_grades_frame(pilot)
    cells_ids = unique_values(frame["cell_id"])
    moments = Side.build(frame, cells_ids, "pilot").cell_moments(len(cells_ids))
    dof = np.where(moments.n > 1, moments.n - 1.0, 0.0)
    if dof.sum() == 0:
        raise ValueError("the pilot needs at least one cell with two scored repeats")
    pilot_df = float(dof.sum())
    within = float(np.sqrt(np.nansum(np.where(dof > 0, moments.var, 0.0) * dof) / pilot_df))
    means = moments.mean[moments.n > 0]
    between = float(np.std(means, ddof=1)) if means.size > 1 else math.nan
    n_cells = int((moments.n > 0).sum())
    repeats = round(float(np.median(moments.n[moments.n > 0])))
    planned = max(repeats, 2)

    def repeats_enough(r: int) -> bool:
        return within == 0.0 or _power(within, pilot_df, effect, n_cells, r, confidence) >= power

    def cells_enough(c: int) -> bool:
        return within == 0.0 or _power(within, pilot_df, effect, c, planned, confidence) >= power

    per_cell = _search(repeats_enough, 2)
    pilot_mde = minimum_detectable_effect(
        grid_difference_se(within, n_cells, planned), paired_df(n_cells, planned), confidence, power
    )
    achieved = (
        math.nan
        if per_cell is None
        else _power(within, pilot_df, effect, n_cells, per_cell, confidence)
    )
    return RepeatPlan(
        effect=float(effect),
        power=power,
        confidence=confidence,
        within_sd=within,
        between_cell_sd=between,
        pilot_cells=n_cells,
        pilot_repeats=repeats,
        pilot_df=pilot_df,
        pilot_mde=pilot_mde,
        repeats_per_cell=per_cell,
        cells=_search(cells_enough, 1),
        expected_power=achieved,
        assumptions=(
            f"both sides are as noisy as the pilot (within-cell sd {within:.1f}, measured with "
            f"{pilot_df:g} degrees of freedom; power averaged over that sd's uncertainty)",
            "the comparison pools repeats within cells (2 x cells x (repeats - 1) degrees of "
            "freedom) and tests two-sided",
            "the effect is the same in every cell (no cell-by-version interaction)",
            "judge errors do not differ between the sides (otherwise the error bounds cost power)",
        ),
    )
