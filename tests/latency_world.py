"""An independent generator of agent turn latencies for calibrating ``compare_latency``.

Written apart from the library (it knows nothing of its bootstrap): a grid of cells, each with
repeats; a cell moves latency on both sides alike (a long context, a talkative persona), a
conversation moves all its turns (a slow replica, a long reasoning chain), and turns have heavy
tails (log-t noise and occasional multi-second stalls). A side's shift adds seconds to every
agent turn, as a slower model or a longer prompt would. ``cell_drift_sd`` moves each side's
level in each cell on its own (a run's load or routing drifting between the runs of one cell:
0.15 is about 15%); both sides drift alike, so their latency distributions over the
population of cells stay equal and every quantile's true difference is exactly the shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class LatencyWorld:
    """Demo-like defaults: 18 cells x 3 repeats, agent answers around 1.2 s."""

    cells: int = 18
    repeats: int = 3
    median_s: float = 1.2
    cell_sd: float = 0.25  # log-scale spread between cells (shared by both sides)
    conversation_sd: float = 0.15  # log-scale spread between conversations
    turn_scale: float = 0.2  # log-scale of the per-turn Student t noise
    turn_df: float = 3.0  # heavy tails
    stall_rate: float = 0.03  # share of turns with an extra stall
    stall_mean_s: float = 1.5
    min_answers: int = 2
    max_answers: int = 6
    cell_drift_sd: float = 0.0  # log-scale drift of a side's cell level (0.15: about 15%)

    def cell_effects(self, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, self.cell_sd, self.cells)

    def side(
        self, rng: np.random.Generator, cell_effects: np.ndarray, *, shift_s: float = 0.0
    ) -> pd.DataFrame:
        """A turns table (``conversation_id``, ``cell_id``, ``role``, ``latency_s``) of agent
        answers for one side."""
        conversation, cell, values = [], [], []
        if self.cell_drift_sd > 0:
            cell_effects = cell_effects + rng.normal(0.0, self.cell_drift_sd, self.cells)
        for c in range(self.cells):
            for r in range(self.repeats):
                k = int(rng.integers(self.min_answers, self.max_answers + 1))
                level = cell_effects[c] + rng.normal(0.0, self.conversation_sd)
                noise = self.turn_scale * rng.standard_t(self.turn_df, k)
                stall = rng.exponential(self.stall_mean_s, k) * (rng.random(k) < self.stall_rate)
                values.append(self.median_s * np.exp(level + noise) + stall + shift_s)
                conversation += [f"c{c}-{r}"] * k
                cell += [f"c{c}"] * k
        return pd.DataFrame(
            {
                "conversation_id": conversation,
                "cell_id": cell,
                "role": "agent",
                "latency_s": np.concatenate(values),
            }
        )

    def pair(self, seed: int, shift_s: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Baseline and candidate over the same cells; the candidate ``shift_s`` slower."""
        rng = np.random.default_rng(seed)
        effects = self.cell_effects(rng)
        return self.side(rng, effects), self.side(rng, effects, shift_s=shift_s)
