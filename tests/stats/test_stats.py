"""evalkit.stats: intervals, pass^k, bootstrap, grid moments, MDE."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from evalkit.stats import (
    CellMoments,
    grid_difference_se,
    grid_mean,
    minimum_detectable_effect,
    paired_bootstrap,
    paired_difference,
    pass_hat_k,
    wilson_interval,
)


def test_wilson_matches_closed_form_and_vectorises() -> None:
    z = stats.norm.ppf(0.975)
    x, n = 7, 20
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_interval(x, n) == pytest.approx((centre - half, centre + half))
    low, high = wilson_interval(np.array([0, 7, 20]), np.array([20, 20, 20]))
    assert low[1] == pytest.approx(centre - half)
    assert low[0] == 0.0
    assert high[2] == 1.0
    assert np.isnan(wilson_interval(0, 0)[0])


def test_wilson_covers_at_least_nominal_on_average() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 4000)
    x = rng.binomial(30, p)
    low, high = wilson_interval(x, np.full_like(x, 30))
    assert ((low <= p) & (p <= high)).mean() >= 0.93


def test_pass_hat_k() -> None:
    assert pass_hat_k(3, 5, 2) == pytest.approx(special.comb(3, 2) / special.comb(5, 2))
    assert pass_hat_k(5, 5, 5) == 1.0
    assert math.isnan(pass_hat_k(2, 2, 3))
    out = pass_hat_k(np.array([1, 4]), np.array([4, 4]), 2)
    assert out[0] == 0.0
    assert out[1] == 1.0
    with pytest.raises(ValueError, match="c <= n"):
        pass_hat_k(5, 4, 1)


def test_paired_bootstrap_is_seeded_and_sensible() -> None:
    deltas = np.random.default_rng(3).normal(2.0, 5.0, 40)
    first = paired_bootstrap(deltas, n_resamples=2000, seed=1)
    assert first == paired_bootstrap(deltas, n_resamples=2000, seed=1)
    mean, low, high = first
    assert mean == pytest.approx(deltas.mean())
    assert low < mean < high
    se = deltas.std(ddof=1) / math.sqrt(40)
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.25)
    assert paired_bootstrap([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)


def test_cell_moments_match_numpy() -> None:
    x = np.random.default_rng(4).normal(size=(5, 4))
    x[1, 2] = np.nan
    x[2, 1:] = np.nan
    m = CellMoments.from_values(x)
    assert m.n.tolist() == [4, 3, 1, 4, 4]
    np.testing.assert_allclose(m.mean, np.nanmean(x, axis=-1))
    np.testing.assert_allclose(m.var[[0, 1, 3, 4]], np.nanvar(x[[0, 1, 3, 4]], axis=-1, ddof=1))
    assert np.isnan(m.var[2])


def test_grid_mean_equal_variances_uses_pooled_variance() -> None:
    x = np.random.default_rng(5).normal(50, 10, size=(18, 3))
    interval = grid_mean(CellMoments.from_values(x))
    assert interval.estimate == pytest.approx(x.mean())
    pooled = np.var(x, axis=-1, ddof=1).mean()
    assert interval.se == pytest.approx(math.sqrt(pooled / (18 * 3)))
    assert 17 < interval.df <= 36


def test_paired_difference_batches_and_skips_unpaired_cells() -> None:
    rng = np.random.default_rng(6)
    a = rng.normal(size=(7, 10, 3))
    b = a + 1.0 + rng.normal(scale=0.1, size=a.shape)
    b[:, 0, :] = np.nan  # cell 0 only on the baseline side
    batch = paired_difference(CellMoments.from_values(a), CellMoments.from_values(b))
    one = paired_difference(CellMoments.from_values(a[2]), CellMoments.from_values(b[2]))
    assert batch.estimate.shape == (7,)
    assert batch.low[2] == pytest.approx(one.low)
    expected = (b[2, 1:].mean(axis=-1) - a[2, 1:].mean(axis=-1)).mean()
    assert one.estimate == pytest.approx(expected)


def test_interval_coverage_for_normal_data() -> None:
    rng = np.random.default_rng(7)
    cell_effects = rng.normal(0, 20, size=(1, 18, 1))
    a = cell_effects + rng.normal(0, 15, size=(3000, 18, 3))
    b = cell_effects + 4.0 + rng.normal(0, 15, size=(3000, 18, 3))
    iv = paired_difference(CellMoments.from_values(a), CellMoments.from_values(b))
    coverage = ((iv.low <= 4.0) & (iv.high >= 4.0)).mean()
    assert 0.94 <= coverage <= 0.96  # observed 0.954


def test_minimum_detectable_effect_gives_the_power_it_promises() -> None:
    sigma, cells, repeats = 20.0, 18, 3
    se = grid_difference_se(sigma, cells, repeats)
    mde = minimum_detectable_effect(se, 2 * cells * (repeats - 1), 0.95, 0.9)
    rng = np.random.default_rng(8)
    a = rng.normal(60, sigma, size=(3000, cells, repeats))
    b = rng.normal(60 - mde, sigma, size=(3000, cells, repeats))
    iv = paired_difference(CellMoments.from_values(a), CellMoments.from_values(b))
    power = (iv.high < 0).mean()
    assert 0.87 <= power <= 0.93  # observed 0.893 (Welch df a little under the planned 72)
    assert math.isnan(minimum_detectable_effect(float("nan"), 10))


def test_fisher_exact_doubles_the_smaller_tail_like_scipy() -> None:
    from scipy.stats import fisher_exact

    from evalkit.stats import fisher_exact_p

    for x1, n1, x2, n2 in [(3, 54, 10, 54), (0, 54, 4, 54), (5, 30, 1, 40), (2, 20, 2, 20)]:
        table = [[x2, n2 - x2], [x1, n1 - x1]]
        tails = [fisher_exact(table, alternative=a)[1] for a in ("greater", "less")]
        assert fisher_exact_p(x1, n1, x2, n2) == pytest.approx(min(1.0, 2 * min(tails)))
    batch = fisher_exact_p(np.array([3, 0]), 54, np.array([10, 4]), 54)
    assert batch.shape == (2,)
    assert fisher_exact_p(0, 10, 0, 10) == 1.0


@pytest.mark.parametrize("correlation", [-1.0, 0.0, 0.5, 0.99])
def test_mover_limits_stay_on_the_scale(correlation: float) -> None:
    from evalkit.stats import mover_difference
    from evalkit.stats._bounded import side_limits

    rng = np.random.default_rng(9)
    p1, p2 = rng.random(500), rng.random(500)
    v1, v2 = rng.random(500) * 0.05, rng.random(500) * 0.05
    q = np.full(500, 2.5)
    l1, u1 = side_limits(p1, v1, q, p1)
    l2, u2 = side_limits(p2, v2, q, p2)
    assert ((l1 <= p1) & (p1 <= u1) & (l1 >= 0) & (u1 <= 1)).all()
    low, high = mover_difference((p1, l1, u1), (p2, l2, u2), correlation)
    assert (low >= -1.0 - 1e-12).all()
    assert (high <= 1.0 + 1e-12).all()
    assert ((low <= p1 - p2) & (p1 - p2 <= high)).all()


def test_the_design_chooses_the_variance_method() -> None:
    from evalkit.stats import VarianceMethod, paired_grid

    rng = np.random.default_rng(10)

    def method(cells: int, repeats: list[int]) -> int:
        x = rng.uniform(0, 100, size=(cells, max(repeats)))
        for c in range(cells):
            x[c, repeats[c % len(repeats)] :] = np.nan
        m = CellMoments.from_values(x)
        return int(paired_grid(m, m).method)

    assert method(18, [3]) == VarianceMethod.WITHIN_CELLS
    assert method(18, [2]) == VarianceMethod.WITHIN_CELLS  # 18 df per side >= 17
    assert method(18, [1]) == VarianceMethod.PAIRED_CELLS
    assert method(60, [2] + [1] * 59) == VarianceMethod.PAIRED_CELLS  # one repeated cell
    assert method(1, [3]) == VarianceMethod.WITHIN_CELLS  # one cell with repeats is enough
    assert method(1, [1]) == VarianceMethod.NONE


def test_power_of_matches_simulation() -> None:
    from evalkit.stats import power_of

    sigma, cells, repeats, effect = 20.0, 18, 3, 12.0
    se = grid_difference_se(sigma, cells, repeats)
    rng = np.random.default_rng(11)
    a = rng.normal(60, sigma, size=(4000, cells, repeats))
    b = rng.normal(60 - effect, sigma, size=(4000, cells, repeats))
    iv = paired_difference(CellMoments.from_values(a), CellMoments.from_values(b))
    simulated = float((iv.high < 0).mean())
    assert power_of(-effect, se, 2 * cells * (repeats - 1)) == pytest.approx(simulated, abs=0.025)
