"""Group-sequential boundaries against published values and against simulated Brownian motion."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import (
    conditional_power,
    confidence_sequence_bounds,
    efficacy_bounds,
    futility_bounds,
    spent_alpha,
    stopping_probabilities,
)

#: Two-sided symmetric designs (gsDesign test.type = 2, alpha = 0.025 a side), as printed by
#: gsDesign 3.x / rpact for equally spaced looks.
PUBLISHED = {
    ("hsd", 3): [3.0107, 2.5465, 1.9992],
    ("pocock", 5): [2.4380, 2.4268, 2.4102, 2.3966, 2.3860],
    ("obf", 5): [4.8769, 3.3569, 2.6803, 2.2898, 2.0310],
}


def _upper_binomial(n: int, p: float) -> float:
    return float(stats.binom.ppf(0.999, n, p) / n)


@pytest.mark.parametrize(("spending", "looks"), list(PUBLISHED))
def test_efficacy_bounds_match_published_values(spending: str, looks: int) -> None:
    t = np.arange(1, looks + 1) / looks
    got = efficacy_bounds(t, 0.05, spending)
    np.testing.assert_allclose(got, PUBLISHED[(spending, looks)], atol=2e-3)


def test_alpha_is_spent_exactly_and_cumulatively() -> None:
    t = np.array([0.2, 0.45, 0.7, 1.0])
    c = efficacy_bounds(t, 0.05)
    p = stopping_probabilities(t, c)
    np.testing.assert_allclose(np.cumsum(p.efficacy), spent_alpha(t, 0.05), atol=1e-6)
    assert p.efficacy.sum() == pytest.approx(0.05, abs=1e-6)


def _brownian(trials: int, t: np.ndarray, theta: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.diff(np.concatenate([[0.0], t]))
    w = np.cumsum(rng.normal(theta * dt, np.sqrt(dt), size=(trials, t.size)), axis=1)
    return np.asarray(w / np.sqrt(t))


def test_boundaries_hold_alpha_on_simulated_brownian_motion() -> None:
    t = np.arange(1, 7) / 6
    c = efficacy_bounds(t, 0.05)
    z = _brownian(40_000, t, 0.0, seed=3)
    crossed = (np.abs(z) >= c).any(axis=1).mean()
    assert 0.05 * 0.85 < crossed < _upper_binomial(40_000, 0.05)


def test_futility_is_non_binding_and_spends_at_most_beta() -> None:
    t = np.arange(1, 7) / 6
    c = efficacy_bounds(t, 0.05)
    theta = 3.2
    f = futility_bounds(t, c, theta, beta=0.1, shape=1.0)
    assert f[-1] == 0.0
    assert np.all(f <= c)
    p = stopping_probabilities(t, c, f, theta)
    assert p.futility.sum() <= 0.1 + 1e-6
    fixed_power = stats.norm.sf(stats.norm.isf(0.025) - theta)
    assert p.upper.sum() > fixed_power - 0.05  # little power lost to futility
    z = _brownian(40_000, t, theta, seed=4)
    stopped = np.zeros(len(z), dtype=bool)
    futile = np.zeros(len(z), dtype=bool)
    for k in range(t.size):
        fut_now = ~stopped & (np.abs(z[:, k]) < f[k])
        eff_now = ~stopped & (np.abs(z[:, k]) >= c[k])
        futile |= fut_now
        stopped |= fut_now | eff_now
    # the simulated rate within 4 binomial standard errors of the computed probability
    se = np.sqrt(p.futility.sum() * (1 - p.futility.sum()) / len(z))
    assert futile.mean() == pytest.approx(p.futility.sum(), abs=4 * se)


def test_confidence_sequence_holds_at_every_look() -> None:
    t = np.arange(1, 101) / 100
    c = confidence_sequence_bounds(t, 0.05)
    z = _brownian(20_000, t, 0.0, seed=5)
    assert (np.abs(z) >= c).any(axis=1).mean() <= _upper_binomial(20_000, 0.05)
    assert np.all(c > stats.norm.isf(0.025))  # wider than a fixed look


def test_conditional_power_is_the_b_value_formula() -> None:
    cp = conditional_power(1.0, 0.5, 3.0, 1.96)
    b = 1.0 * np.sqrt(0.5)
    assert cp == pytest.approx(stats.norm.sf((1.96 - b - 3.0 * 0.5) / np.sqrt(0.5)))


@pytest.mark.parametrize("bad", [[0.5, 0.4], [0.0, 1.0], [0.5, 1.2], []])
def test_bad_information_fractions_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="information fractions"):
        efficacy_bounds(bad)


def test_unknown_spending_function_is_named() -> None:
    with pytest.raises(ValueError, match="spending must be one of"):
        spent_alpha([1.0], 0.05, "linear")
