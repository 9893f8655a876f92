"""Adaptive allocation over generated sweeps: it saves conversations, not correctness."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.tuning._adaptive import drop_bound_confidence, wave_drops
from evalkit.tuning._split import holdout_mask
from tests.simulate import Design
from tests.simulate._adaptive import adaptive_rates, simulate_adaptive
from tests.simulate._arms import arms_data, draw_arms

HOLD = holdout_mask([f"cell-{c:03d}" for c in range(36)], 0.3, 0)


def test_half_clearly_worse_arms_cost_forty_percent_less() -> None:
    codes = draw_arms(
        Design("36 x 8", cells=36, repeats=8), (15.0, 0.0, -20.0, -20.0), trials=400, seed=31
    )
    fixed = adaptive_rates(simulate_adaptive(codes, HOLD, adaptive=False), 0)
    outcome = simulate_adaptive(codes, HOLD)
    moved = adaptive_rates(outcome, 0)
    assert moved["conversations"] <= 0.6 * fixed["conversations"]
    assert moved["best_confirmed"] >= fixed["best_confirmed"] - 0.02
    assert moved["best_dropped"] <= 0.05
    # the harmful arms go first, the good arm never
    assert (outcome.dropped_at[:, 2:] == 1).mean() > 0.9
    assert (outcome.dropped_at[:, 0] == 0).all()
    assert outcome.arm_conversations.shape == (400, 4)
    assert set(np.unique(outcome.arm_conversations)) <= {36 * w for w in range(1, 9)}


def test_dropping_keeps_the_family_wise_error() -> None:
    trials = 800
    codes = draw_arms(Design("36 x 4", cells=36, repeats=4), (0.0,) * 5, trials=trials, seed=32)
    outcome = simulate_adaptive(codes, HOLD)
    rate = float(outcome.selection.confirmed.mean())
    assert rate <= stats.binom.ppf(0.999, trials, 0.025) / trials


def test_drops_read_selection_cells_only() -> None:
    """Making the held-out cells of an arm terrible does not drop it."""
    codes = draw_arms(Design("36 x 2", cells=36, repeats=2), (0.0, 0.0), trials=50, seed=33)
    arms = codes.arms.copy()
    arms[:, 1][:, HOLD] = np.where(arms[:, 1][:, HOLD] >= 0, 0, arms[:, 1][:, HOLD])  # all fail
    worse = type(codes)(codes.control, arms, codes.points, codes.effects)
    level = drop_bound_confidence(2, 2)
    before = wave_drops(arms_data(codes), HOLD, np.ones((50, 2), bool), confidence=level)
    after = wave_drops(arms_data(worse), HOLD, np.ones((50, 2), bool), confidence=level)
    assert (before == after).all()


def test_drop_level_is_bonferroni_over_arms_and_looks() -> None:
    assert drop_bound_confidence(4, 5, 0.05) == pytest.approx(1 - 2 * 0.05 / 16)
    with pytest.raises(ValueError, match="drop_alpha"):
        drop_bound_confidence(4, 5, 0.0)
