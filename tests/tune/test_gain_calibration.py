"""Calibration of the winner's reported gain, with this test's own generator of grades
(:class:`tests.simulate._gain.FactorGenerator`: a latent-quality model, not the mixture the
other tuning tests draw from), where every arm's true gain is known.

Read after its confirmation, the confirmed winner's all-cells and held-out differences overstate
its gain (the winner's curse); the fresh-repeats difference does not, and its interval holds
the truth at its nominal rate; the selection-adjusted held-out difference (conditional
inference on the truncation the confirmation implies) is median-unbiased and covers at about
its nominal rate. Bounds are binomial for the trial count (one-sided 99.9%)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from scipy import stats

from evalkit.compare._decision import Scenarios
from evalkit.stats import CellMoments
from evalkit.tuning._gain import conditional_estimate, confirmation_threshold
from evalkit.tuning._selection import ArmsData, select_and_confirm
from evalkit.tuning._split import holdout_mask
from tests.simulate._gain import FactorGenerator, GainDesign, simulate_gains

logger = logging.getLogger(__name__)

SEARCH = GainDesign("optimize: 18 cells x 2 waves, 3 rounds x 4", cells=18, max_repeats=2)
SWEEP = GainDesign("tune: 36 cells x 4 waves, 5 arms", cells=36, max_repeats=4)


def lowest(rate: float, n: int) -> float:
    """The smallest share of ``n`` a true ``rate`` gives with probability 99.9%."""
    return float(stats.binom.ppf(0.001, n, rate)) / n


def highest(rate: float, n: int) -> float:
    return float(stats.binom.ppf(0.999, n, rate)) / n


def _check_gain(design: GainDesign, effects: list[list[float]], trials: int, seed: int) -> None:
    out = simulate_gains(design, effects, trials=trials, seed=seed)
    rates = {name: out.rates(name) for name in ("all_cells", "holdout", "adjusted", "fresh")}
    logger.info("%s, effects %s: %s", design.name, effects[0][0], rates)
    winners = rates["fresh"]["winners"]
    assert winners >= 200, rates  # power, reported: enough confirmed winners to measure
    truth = rates["fresh"]["truth"]
    # the winner's curse is there to be fixed: the numbers read after confirmation overstate
    assert rates["all_cells"]["mean"] > truth + 2.0
    assert rates["holdout"]["mean"] > truth + 0.5
    # fresh repeats: unbiased (the mean within 4 standard errors) and covering
    fresh = out.fresh[0][out.confirmed]
    se = float(np.std(fresh, ddof=1)) / np.sqrt(winners)
    assert abs(rates["fresh"]["mean"] - truth) <= 4 * se + 0.1
    assert abs(rates["fresh"]["mean"] - truth) <= 1.5
    assert rates["fresh"]["covered"] / winners >= lowest(0.95, winners)
    # selection-adjusted held-out difference: median-unbiased, covering about as often
    adjusted = out.adjusted[0][out.confirmed]
    below = float(np.mean(adjusted < out.truth[out.confirmed]))
    assert abs(below - 0.5) <= 0.1
    assert rates["adjusted"]["covered"] / winners >= lowest(0.93, winners)


def test_a_searchs_gain_on_fresh_repeats_is_its_true_gain() -> None:
    _check_gain(SEARCH, [[10.0] * 4] * 3, trials=1500, seed=21)


def test_a_sweeps_gain_on_fresh_repeats_is_its_true_gain() -> None:
    _check_gain(SWEEP, [[5.0] * 5], trials=1500, seed=22)


@pytest.mark.parametrize("design", [SEARCH, SWEEP], ids=["search", "sweep"])
def test_a_no_op_proposer_rarely_confirms(design: GainDesign) -> None:
    shape = [[0.0] * 4] * 3 if design is SEARCH else [[0.0] * 5]
    out = simulate_gains(design, shape, trials=2000, seed=23)
    rate = float(out.confirmed.mean())
    logger.info("%s, no-op: %.2f%% confirmed", design.name, 100 * rate)
    assert rate <= min(0.05, highest(0.025, 2000))


def test_the_conditional_interval_is_exact_for_a_truncated_normal() -> None:
    """Draws of N(mu, 1) kept only above a threshold (some far below mu, some far above):
    the interval holds mu at 95% and the estimate is below mu half of the time."""
    rng = np.random.default_rng(5)
    n = 20_000
    mu = rng.normal(0.0, 2.0, n)
    threshold = mu + rng.normal(0.0, 1.5, n)
    draws = stats.truncnorm.rvs(threshold - mu, np.inf, loc=mu, random_state=rng)
    est, low, high = conditional_estimate(draws, np.ones(n), threshold, 0.95)
    covered = float(np.mean((low <= mu) & (mu <= high)))
    assert lowest(0.95, n) <= covered <= highest(0.95, n)
    assert abs(float(np.mean(est < mu)) - 0.5) <= 0.02
    # far from the threshold it is the plain interval
    plain = conditional_estimate(np.array([3.0]), np.array([1.0]), np.array([-50.0]), 0.95)
    assert [float(v[0]) for v in plain] == pytest.approx([3.0, 3.0 - 1.96, 3.0 + 1.96], abs=0.01)
    # at the threshold nothing is known below: the interval reaches the scale's end
    edge = conditional_estimate(np.array([2.0]), np.array([1.0]), np.array([2.0]), 0.95)
    assert float(edge[1][0]) == -100.0


def test_the_threshold_is_where_the_combination_test_confirms() -> None:
    """On generated sweeps (no judge errors), the selected arm is confirmed exactly when its
    held-out difference reaches :func:`confirmation_threshold`."""
    gen = FactorGenerator()
    rng = np.random.default_rng(9)
    trials, cells, repeats = 3000, 36, 2
    mu, tau = gen.truth(rng, trials, cells)
    expected = gen.expected_scores(mu, tau)
    zero = np.zeros_like(expected)
    control = gen.scores(rng, mu, tau, (zero, zero), repeats)
    arms = []
    for effect in (6.0, 3.0, 0.0):
        up, down, _ = gen.cell_effects(rng, expected, effect)
        arms.append(gen.scores(rng, mu, tau, (up, down), repeats))
    data = ArmsData(
        Scenarios.same(CellMoments.from_values(control)),
        Scenarios.same(CellMoments.from_values(np.stack(arms, axis=1))),
        np.zeros((trials, 3), dtype=bool),
    )
    hold = holdout_mask([f"c{i}" for i in range(cells)], 0.3, 1)
    sel = select_and_confirm(data, hold, confidence=0.95)
    bound = confirmation_threshold(
        sel.closed_p, sel.weights, sel.alpha, sel.holdout_se, sel.holdout_df
    )
    reaches = sel.holdout_estimate >= bound - 1e-9
    near = np.abs(sel.holdout_estimate - bound) < 1e-6  # rounding at the boundary itself
    assert 0.05 < float(sel.confirmed.mean()) < 0.95  # both outcomes occur
    assert np.array_equal(sel.confirmed[~near], reaches[~near])
