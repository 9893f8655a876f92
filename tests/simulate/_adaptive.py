"""Simulated adaptive sweeps: :mod:`evalkit.tuning._adaptive`'s waves and drops run over
generated arms (:mod:`._arms`), for calibration and the tune benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.tuning._adaptive import drop_bound_confidence, wave_drops
from evalkit.tuning._selection import Selection, select_and_confirm

from ._arms import ArmCodes, arms_data

__all__ = ["AdaptiveOutcome", "adaptive_rates", "simulate_adaptive"]

BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class AdaptiveOutcome:
    """A simulated adaptive sweep per trial: when arms were dropped (0: never), the
    conversations each arm and the control spent, and the final selection."""

    dropped_at: NDArray[np.int64]  # (T, K)
    arm_conversations: NDArray[np.int64]  # (T, K)
    control_conversations: int
    selection: Selection

    @property
    def conversations(self) -> NDArray[np.int64]:
        """Conversations per trial, control and arms."""
        return np.asarray(self.arm_conversations.sum(axis=-1) + self.control_conversations)


def simulate_adaptive(
    codes: ArmCodes,
    holdout: BoolArray,
    *,
    confidence: float = 0.95,
    drop_alpha: float = 0.05,
    adaptive: bool = True,
) -> AdaptiveOutcome:
    """Run the waves over generated sweeps (``codes`` holds every repeat a sweep may run):
    after wave ``w`` the arms' first ``w`` repeats decide the drops; the final decision reads
    every repeat of the arms still in. ``adaptive=False`` runs every arm to the end."""
    trials, k, cells, waves = codes.arms.shape[:4]
    active = np.ones((trials, k), dtype=bool)
    dropped_at = np.zeros((trials, k), dtype=np.int64)
    level = drop_bound_confidence(k, waves, drop_alpha)
    if adaptive:
        for wave in range(1, waves):
            drops = wave_drops(arms_data(codes.truncated(wave)), holdout, active, confidence=level)
            dropped_at[drops] = wave
            active &= ~drops
    repeats = np.where(dropped_at > 0, dropped_at, waves)
    selection = select_and_confirm(arms_data(codes), holdout, confidence=confidence, active=active)
    return AdaptiveOutcome(
        dropped_at=dropped_at,
        arm_conversations=(repeats * cells).astype(np.int64),
        control_conversations=waves * cells,
        selection=selection,
    )


def adaptive_rates(outcome: AdaptiveOutcome, best: int) -> dict[str, Any]:
    """Confirmation rates and conversations of simulated sweeps (``best``: the good arm)."""
    sel = outcome.selection
    return {
        "best_confirmed": float((sel.confirmed & (sel.selected == best)).mean()),
        "other_confirmed": float((sel.confirmed & (sel.selected != best)).mean()),
        "conversations": float(outcome.conversations.mean()),
        "best_dropped": float((outcome.dropped_at[:, best] > 0).mean()) if best >= 0 else 0.0,
    }
