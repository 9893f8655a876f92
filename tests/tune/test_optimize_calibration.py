"""Calibration of optimize's decision with this test's own generator of grades (simulated
searches, not the emulator): a proposer whose edits change nothing gives a confirmed winner in
at most 5% of searches (within the binomial bound of the nominal 2.5%) whatever the rounds and
candidates, where a greedy loop without confirmation calls a winner most of the time; and a
real improvement is still found (power reported)."""

from __future__ import annotations

import logging

from scipy import stats

from tests.simulate import Design
from tests.simulate._optimize import simulate_search

logger = logging.getLogger(__name__)

DESIGN = Design("18 cells x 2 waves", cells=18, repeats=2)
TRIALS = 400


def _upper(rate: float, trials: int) -> float:
    """The most false winners that are consistent with ``rate`` (one-sided 99.9%)."""
    return float(stats.binom.ppf(0.999, trials, rate)) / trials


def test_noop_proposer_rarely_confirms_a_winner() -> None:
    for rounds, k in ((1, 4), (3, 4), (5, 3)):
        rates = simulate_search(DESIGN, [[0.0] * k] * rounds, trials=TRIALS, seed=rounds)
        logger.info("no-op, %d rounds x %d: %s", rounds, k, rates)
        assert rates.confirmed <= min(0.05, _upper(0.025, TRIALS))
        assert rates.greedy_above >= 0.8  # greedy keeps a "winner" in most searches
        assert rates.greedy_t > rates.confirmed


def test_a_real_improvement_is_confirmed() -> None:
    effects = [[0.0, -10.0, 0.0], [15.0, 0.0, -10.0], [0.0, 0.0, 0.0]]
    rates = simulate_search(DESIGN, effects, trials=TRIALS, seed=11)
    logger.info("one 15-point candidate among 9: %s", rates)
    assert rates.best_confirmed >= 0.4  # 53% at 18 cells x 2 waves, 9 candidates (README)
    assert rates.confirmed - rates.best_confirmed <= 0.05
