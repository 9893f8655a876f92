"""The conversations a decision would need, said when a check has insufficient evidence.

Planned with the comparison's own arithmetic (:func:`evalkit.compare.plan_repeats`, from the
runs' noise within cells) at the level the check reads, for a difference as large as the
margin; a pass rate's plan is the smallest sample whose Wilson interval at the observed rate
would leave the bar out (:func:`evalkit.stats.wilson_interval`).
"""

from __future__ import annotations

import math

from ..compare import RepeatPlanOptions, plan_repeats
from ..grading import Grades
from ..stats import wilson_interval

__all__ = ["comparison_needs", "pass_rate_needs"]

_MAX_N = 1_000_000


def comparison_needs(pilot: Grades, effect: float, level: float, power: float) -> str:
    """How many repeats (conversations a side) tell ``effect`` points with ``power``."""
    effect = effect if effect > 0 else 5.0
    try:
        plan = plan_repeats(
            pilot, options=RepeatPlanOptions(effect=effect, power=power, confidence=level)
        )
    except ValueError:
        return (
            "a decision needs more conversations; the runs have one repeat per cell, so "
            "their noise within cells is unknown: give the grid repeats=2 or more to plan how many"
        )
    if plan.repeats_per_cell is None:
        return (
            f"a difference of {effect:g} points cannot be told at this level with any "
            f"repeats of {plan.pilot_cells} cells: widen the margin or add cells"
        )
    now = plan.pilot_repeats * plan.pilot_cells
    return (
        f"a decision needs about {plan.repeats_per_cell} repeats per cell on "
        f"{plan.pilot_cells} cells ({plan.conversations_per_side} conversations a side, now "
        f"{now}) to tell a difference of {effect:g} points with {power:.0%} power"
    )


def pass_rate_needs(rate: float, at_least: float, n: int, level: float) -> str:
    """How many graded conversations a Wilson interval at ``rate`` needs to leave out
    ``at_least``."""
    if math.isnan(rate):
        return "a decision needs conversations to which the rule applies (none did)"
    if rate == at_least:
        return f"the pass rate is at the bar of {at_least:g}: no sample size decides it"

    def decides(size: int) -> bool:
        low, high = wilson_interval(rate * size, size, level)
        return bool(low >= at_least or high < at_least)

    size = max(n, 1)
    while not decides(size):
        size *= 2
        if size > _MAX_N:
            return f"the pass rate {rate:.3g} is too close to the bar {at_least:g} to decide"
    low, high = size // 2, size
    while low + 1 < high:
        mid = (low + high) // 2
        low, high = (low, mid) if decides(mid) else (mid, high)
    return (
        f"a decision needs about {high} graded conversations for this rule (now {n}), if its "
        f"pass rate stays at {rate:.3g}"
    )
