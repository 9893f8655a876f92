"""PPI++ means against the reference implementation (``ppi_py.ppi_mean_ci``, ppi-python 0.2.3;
recorded values, since it drags numba in) and their design properties."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.stats import ppi_difference, ppi_mean, ppi_pseudo_values

#: (n labelled, N unlabelled, false-pass rate, false-fail rate) per seed, and ppi_mean_ci /
#: ppi_mean_pointestimate at alpha 0.05: lam -> (estimate, low, high).
CASES = [
    ((100, 400, 0.35, 0.05), {
        None: (0.6360908412, 0.5610228195, 0.7111588629),
        1.0: (0.64, 0.5557500413, 0.7242499587),
        0.0: (0.63, 0.5353720944, 0.7246279056)}),
    ((40, 200, 0.1, 0.1), {
        None: (0.723253597, 0.5975457819, 0.8489614121),
        1.0: (0.755, 0.5961053559, 0.9138946441),
        0.0: (0.7, 0.5579871175, 0.8420128825)}),
    ((250, 1000, 0.0, 0.0), {
        None: (0.695438842, 0.6698089729, 0.7210687111),
        1.0: (0.686, 0.6572342983, 0.7147657017),
        0.0: (0.724, 0.6685882443, 0.7794117557)}),
    ((60, 300, 0.2, 0.02), {
        None: (0.7265694845, 0.6527844571, 0.800354512),
        1.0: (0.73, 0.6493128322, 0.8106871678),
        0.0: (0.7166666667, 0.6026469641, 0.8306863693)}),
]  # fmt: skip


def _data(seed: int, n: int, unlabelled: int, false_pass: float, false_fail: float):
    """The data the recorded values were computed on (labelled items first)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(unlabelled + n) < 0.7).astype(float)
    r = rng.random(unlabelled + n)
    yhat = np.where(y == 1, (r >= false_fail).astype(float), (r < false_pass).astype(float))
    label = np.r_[y[:n], np.full(unlabelled, np.nan)]
    return yhat, label


@pytest.mark.parametrize("seed", range(len(CASES)))
@pytest.mark.parametrize("lam", [None, 1.0, 0.0])
def test_matches_the_reference_package(seed: int, lam: float | None) -> None:
    (n, unlabelled, fp, ff), reference = CASES[seed]
    yhat, label = _data(seed, n, unlabelled, fp, ff)
    total = n + unlabelled
    # the reference averages the judge over unlabelled items only: its lam' is lam (N - n) / N
    ours = ppi_mean(yhat, label, lam=None if lam is None else lam * total / unlabelled)
    estimate, low, high = reference[lam]
    if lam is None:  # both tune lam from the data, to the same population optimum
        assert ours.estimate == pytest.approx(estimate, abs=0.002)
        assert ours.high - ours.low == pytest.approx(high - low, rel=0.02)
    else:
        assert ours.estimate == pytest.approx(estimate, abs=1e-9)
        assert ours.high - ours.low == pytest.approx(high - low, rel=0.01)


def test_pseudo_values_are_unbiased_item_by_item_under_a_stratified_draw() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.6).astype(float)
    yhat = np.where(y == 1, 1.0, (rng.random(200) < 0.4).astype(float))
    pi = np.where(yhat == 1, 0.2, 0.5)  # judge passes labelled less often
    total = np.zeros(200)
    draws = 4000
    for _ in range(draws):
        labelled = rng.random(200) < pi
        psi, _ = ppi_pseudo_values(yhat, np.where(labelled, y, np.nan), 1 / pi, lam=0.8)
        total += psi
    # the mean over draws of each item's pseudo-value is its label (up to Delta's wobble)
    assert np.abs(total / draws - y).mean() < 0.05
    assert (total / draws).mean() == pytest.approx(y.mean(), abs=0.01)


def test_a_perfect_judge_is_no_wider_than_the_judge_alone() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random(600) < 0.7).astype(float)
    label = np.where(rng.random(600) < 0.25, y, np.nan)
    corrected = ppi_mean(y, label)
    alone = ppi_mean(y, np.full(600, np.nan))
    assert corrected.lam == pytest.approx(1.0, abs=0.05)
    assert corrected.high - corrected.low <= 1.05 * (alone.high - alone.low)


def test_labels_that_all_agree_never_give_a_zero_width_interval() -> None:
    ones = np.ones(50)
    estimate = ppi_mean(ones, np.where(np.arange(50) < 10, 1.0, np.nan))
    assert estimate.estimate == 1.0
    assert estimate.high > estimate.low


def test_difference_of_independent_sides_adds_variances() -> None:
    a = ppi_mean(*_data(0, 100, 400, 0.35, 0.05))
    b = ppi_mean(*_data(1, 40, 200, 0.1, 0.1))
    d = ppi_difference(a, b)
    assert d.estimate == pytest.approx(b.estimate - a.estimate)
    assert d.se == pytest.approx(np.hypot(a.se, b.se))


def test_bad_weights_name_the_field() -> None:
    with pytest.raises(ValueError, match="weight"):
        ppi_mean([1.0, 0.0], [1.0, np.nan], [0.5, 1.0])
    with pytest.raises(ValueError, match="judge"):
        ppi_mean([np.nan, 0.0], [1.0, np.nan])
