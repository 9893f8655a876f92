"""The search's decision rule (screen, choose, confirm on fresh repeats, Holm) and its exact
binomial parts, calibrated on a generator of counts of our own.

False findings are pairs reported whose true failure rate is at most the threshold; the share
of searches with any must stay within binomial bounds of the nominal 5% for the trial count
(the worst case: every pair exactly at the threshold). Power is reported and bounded below.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.personas._decide import choose, confirm, kept_pairs, specificity
from evalkit.stats import binomial_p_above, clopper_pearson_interval, holm_adjusted

SEARCHES = 2000
ALPHA = 0.05
THRESHOLD = 0.25


def _upper(k_nominal: float, n: int) -> float:
    """The largest share of ``n`` trials a rate of ``k_nominal`` gives at 99.9%."""
    return float(stats.binom.ppf(0.999, n, k_nominal)) / n


def _search(rates: np.ndarray, rng: np.random.Generator, screen: int = 2, fresh: int = 8):
    f = rng.binomial(screen, rates)
    n = np.full(rates.shape, screen)
    kept = kept_pairs(f, n, 1)
    chosen = choose(specificity(f, n, kept), kept.any(axis=-1), 6)
    verdict = confirm(
        rng.binomial(fresh, rates),
        np.full(rates.shape, fresh),
        kept & chosen[..., None],
        threshold=THRESHOLD,
        confidence=1 - ALPHA,
    )
    return verdict


def test_false_findings_stay_within_the_nominal_rate_at_the_threshold() -> None:
    rng = np.random.default_rng(20261202)
    rates = np.full((SEARCHES, 24, 7), THRESHOLD)
    verdict = _search(rates, rng)
    assert verdict.tested.any(axis=(-1, -2)).mean() > 0.9  # the confirmation did run
    false = verdict.reported.any(axis=(-1, -2)).mean()
    assert false <= _upper(ALPHA, SEARCHES), false


def test_a_real_weakness_is_reported_with_power() -> None:
    rng = np.random.default_rng(7)
    rates = np.full((SEARCHES, 24, 7), 0.02)
    rates[:, 0, 0] = rates[:, 1, 1] = rates[:, 2, 2] = 0.9
    verdict = _search(rates, rng)
    truly = rates > THRESHOLD
    power = (verdict.reported & truly).sum() / truly.sum()
    false = (verdict.reported & ~truly).any(axis=(-1, -2)).mean()
    # a 90% weakness is kept in screening 99% of the time and confirmed on 8 fresh repeats
    assert power > 0.8, power
    assert false <= _upper(ALPHA, SEARCHES), false


def test_a_persona_that_failed_once_by_chance_is_not_reported() -> None:
    # kept in screening (1 of 2 failed), then 1 of 8 fresh conversations fail: not reported
    verdict = confirm(
        np.array([[1, 0]]),
        np.array([[8, 8]]),
        np.array([[True, False]]),
        threshold=THRESHOLD,
        confidence=0.95,
    )
    assert verdict.tested[0, 0]
    assert not verdict.reported.any()
    strong = confirm(
        np.array([[8, 0]]),
        np.array([[8, 8]]),
        np.array([[True, False]]),
        threshold=0.25,
        confidence=0.95,
    )
    assert strong.reported[0, 0]
    assert not strong.reported[0, 1]


def test_the_exact_tail_is_scipys_binomial_test() -> None:
    for k, n, rate in ((0, 5, 0.25), (3, 8, 0.25), (8, 8, 0.25), (12, 40, 0.1)):
        expected = stats.binomtest(k, n, rate, alternative="greater").pvalue
        assert binomial_p_above(k, n, rate) == pytest.approx(expected, rel=1e-9)
    assert binomial_p_above(0, 0, 0.25) == 1.0


def test_the_exact_interval_inverts_the_two_tails_and_covers() -> None:
    for k, n in ((1, 6), (3, 8), (17, 40)):
        low, high = clopper_pearson_interval(k, n, 0.95)
        # Clopper-Pearson: each end is where one tail of the binomial is exactly 2.5%
        assert stats.binom.sf(k - 1, n, low) == pytest.approx(0.025, abs=1e-9)
        assert stats.binom.cdf(k, n, high) == pytest.approx(0.025, abs=1e-9)
    assert clopper_pearson_interval(0, 6, 0.95)[0] == 0.0
    assert clopper_pearson_interval(6, 6, 0.95)[1] == 1.0
    rng = np.random.default_rng(3)
    truth = 0.3
    k = rng.binomial(8, truth, size=4000)
    low, high = clopper_pearson_interval(k, np.full(4000, 8), 0.95)
    assert ((low <= truth) & (truth <= high)).mean() >= 0.95 - 0.01


def test_holm_steps_down_and_leaves_untested_out() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
    ours = holm_adjusted(p)
    # Holm (1979) by hand over the four tested: 4 x 0.01, max(3 x 0.03, .04), max(2 x .04, .09)
    assert ours[:4] == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert np.isnan(ours[4])
