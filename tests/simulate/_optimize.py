"""Simulated searches for calibration: rounds of candidates raced against one draft with
tuning's adaptive arms, then the final decision over every candidate (the very arrays
:func:`evalkit.tuning._compare.decide_arms` reads), for many trials at once.

Each round's candidates are arms of one generated sweep (:func:`~._arms.draw_arms`, a new
truth per trial); a round's drops look at its own arms only, on the selection cells. Beside
evalkit's decision, two greedy rules that keep the best selection-cell score without a
held-out confirmation: ``greedy_above`` calls a winner whenever the best candidate is above
the draft on the selection cells, ``greedy_t`` when it is also significant there (one-sided t
at 5%, no adjustment for the candidates tried).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.tuning._adaptive import drop_bound_confidence, wave_drops
from evalkit.tuning._selection import select_and_confirm
from evalkit.tuning._split import holdout_mask

from ._arms import ArmCodes, arms_data, draw_arms
from ._generator import Design, GradeGenerator

__all__ = ["OptimizeRates", "simulate_search"]


@dataclass(frozen=True)
class OptimizeRates:
    """Rates over simulated searches: evalkit's confirmed winners, the greedy rules' winners,
    and conversations per search (draft included)."""

    confirmed: float
    best_confirmed: float
    greedy_above: float
    greedy_t: float
    conversations: float
    trials: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _round_drops(codes: ArmCodes, hold: NDArray[np.bool_], start: int, k: int) -> NDArray[np.int64]:
    """When each of one round's ``k`` arms (from ``start``) was dropped (0: never)."""
    trials, _, _, waves = codes.arms.shape[:4]
    sub = ArmCodes(codes.control, codes.arms[:, start : start + k], codes.points, codes.effects)
    active = np.ones((trials, k), dtype=bool)
    dropped = np.zeros((trials, k), dtype=np.int64)
    level = drop_bound_confidence(k, waves)
    for wave in range(1, waves):
        drops = wave_drops(arms_data(sub.truncated(wave)), hold, active, confidence=level)
        dropped[drops] = wave
        active &= ~drops
    return dropped


def simulate_search(
    design: Design,
    effects: list[list[float]],
    *,
    trials: int,
    seed: int = 0,
    holdout: float = 0.3,
    confidence: float = 0.95,
    generator: GradeGenerator | None = None,
) -> OptimizeRates:
    """``trials`` searches of ``design`` (``design.repeats`` waves a race); ``effects[r]`` are
    round ``r``'s candidates' planted effects in points (all zero: a no-op proposer)."""
    flat = [e for round_effects in effects for e in round_effects]
    codes = draw_arms(design, flat, trials=trials, seed=seed, generator=generator)
    cells = [f"cell-{c:03d}" for c in range(design.cells)]
    hold = holdout_mask(cells, holdout, seed)
    dropped = np.concatenate(
        [
            _round_drops(codes, hold, sum(len(x) for x in effects[:r]), len(effects[r]))
            for r in range(len(effects))
        ],
        axis=1,
    )
    sel = select_and_confirm(arms_data(codes), hold, confidence=confidence, active=dropped == 0)
    best = int(np.argmax(flat)) if max(flat) > 0 else -1
    above = sel.selection_estimate.max(axis=-1, where=dropped == 0, initial=-np.inf) > 0
    chosen_p = np.take_along_axis(sel.selection_p, np.maximum(sel.selected, 0)[:, None], axis=-1)
    waves = design.repeats
    spent = np.where(dropped > 0, dropped, waves).sum(axis=-1) * design.cells + waves * design.cells
    return OptimizeRates(
        confirmed=float(sel.confirmed.mean()),
        best_confirmed=float((sel.confirmed & (sel.selected == best)).mean()),
        greedy_above=float(above.mean()),
        greedy_t=float((above & (chosen_p[:, 0] <= 0.05)).mean()),
        conversations=float(spent.mean()),
        trials=trials,
    )
