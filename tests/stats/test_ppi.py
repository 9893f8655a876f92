"""PPI++ and stratified means: against the reference implementation (``ppi_py.ppi_mean_ci``,
ppi-python 0.2.3; recorded values, since it drags numba in), their design properties, the
variance floor, the labels' degrees of freedom, and their calibration on a generator of our
own (binomial bounds for the trial count)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import (
    ppi_mean,
    ppi_pseudo_values,
    stratified_mean,
    stratified_pseudo_values,
)

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
    # the reference's limits are normal; ours are Student's t at the labels' degrees of
    # freedom, so the standard errors are what must agree
    se = (high - low) / 2 / stats.norm.ppf(0.975)
    if lam is None:  # both tune lam from the data, to the same population optimum
        assert ours.estimate == pytest.approx(estimate, abs=0.002)
        assert ours.se == pytest.approx(se, rel=0.02)
    else:
        assert ours.estimate == pytest.approx(estimate, abs=1e-9)
        assert ours.se == pytest.approx(se, rel=0.01)
    q = stats.t.ppf(0.975, ours.df)
    assert ours.high - ours.low == pytest.approx(2 * q * ours.se)


def _queue_draw(
    rng: np.random.Generator, yhat: np.ndarray, take: dict[float, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The label queue's draw: ``take[v]`` labels without replacement among the items the
    judge gave ``v``; each labelled item's weight is 1 / inclusion probability."""
    labelled = np.zeros(len(yhat), bool)
    weight = np.full(len(yhat), np.nan)
    for value, k in take.items():
        members = np.flatnonzero(yhat == value)
        labelled[rng.choice(members, k, replace=False)] = True
        weight[yhat == value] = len(members) / k
    return labelled, weight


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


def test_under_the_queues_draw_ppi_is_the_stratified_estimator() -> None:
    """PPI++'s tuned weight is the within-verdict slope: the estimates coincide, and the
    stratified label terms are PPI++'s scaled by sqrt(k / (k - 1)) per verdict."""
    rng = np.random.default_rng(8)
    y = (rng.random(300) < 0.75).astype(float)
    yhat = np.where(y == 1, rng.random(300) >= 0.05, rng.random(300) < 0.35).astype(float)
    labelled, weight = _queue_draw(rng, yhat, {1.0: 25, 0.0: 5})
    label = np.where(labelled, y, np.nan)
    ppi_psi, lam = ppi_pseudo_values(yhat, label, weight)
    psi, terms = stratified_pseudo_values(yhat, label)
    slope = y[labelled & (yhat == 1)].mean() - y[labelled & (yhat == 0)].mean()
    assert lam == pytest.approx(slope)
    assert psi.mean() == pytest.approx(ppi_psi.mean())
    scale = np.sqrt(terms.labelled / (terms.labelled - 1.0))[terms.stratum]
    assert ppi_psi == pytest.approx(psi - terms.part + terms.part / scale)
    one_fail = np.where(labelled & (yhat == 1), y, np.nan)
    first = np.flatnonzero(yhat == 0)[0]
    one_fail[first] = y[first]
    with pytest.raises(ValueError, match="stratum where the judge says 0 has 1 label"):
        stratified_pseudo_values(yhat, one_fail)


def test_a_perfect_judge_is_no_wider_than_the_judge_alone() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random(600) < 0.7).astype(float)
    label = np.where(rng.random(600) < 0.25, y, np.nan)
    corrected = ppi_mean(y, label)
    alone = ppi_mean(y, np.full(600, np.nan))
    assert corrected.lam == pytest.approx(1.0, abs=0.05)
    assert corrected.high - corrected.low <= 1.05 * (alone.high - alone.low)


@pytest.mark.parametrize("estimator", [ppi_mean, stratified_mean])
@pytest.mark.parametrize("items", [50, 5000])
def test_ten_labels_that_all_agree_give_what_ten_labels_can_show(estimator, items) -> None:  # type: ignore[no-untyped-def]
    """A judge that passes every item and ten labels that agree: the judge's false-pass rate
    may still be 26% (the exact 95% bound from ten clean labels), so the interval reaches at
    least 10 points below 100%, however many items were judged; the variance is the documented
    floor, the larger of the judged mean's ``p~(1-p~)/(N+1)`` and the labels' ``d~(1-d~)/(n+1)``."""
    judge = np.ones(items)
    label = np.where(np.arange(items) < 10, 1.0, np.nan)
    est = estimator(judge, label)
    assert est.estimate == 1.0
    assert est.low <= 0.9
    p = (items + 0.5) / (items + 1)
    d = 0.5 / 11
    assert est.se**2 == pytest.approx(max(p * (1 - p) / (items + 1), d * (1 - d) / 11))
    assert est.df == pytest.approx(9, abs=1)  # the labels' degrees of freedom, not the items'


def test_a_judged_mean_without_labels_is_floored_as_a_mean_of_n_verdicts() -> None:
    """Fifty verdicts that all pass, no labels: the floor is the variance of a mean of 50
    Bernoulli verdicts at the smoothed rate (``p~(1-p~)/(N+1)``, about +-3 points), not an
    item's variance divided once more (+-0.4 points)."""
    est = ppi_mean(np.ones(50), np.full(50, np.nan))
    p = 50.5 / 51
    assert est.se**2 == pytest.approx(p * (1 - p) / 51)
    assert est.low <= 0.98


def test_the_stratified_label_variance_is_unbiased_with_three_labels_on_a_verdict() -> None:
    """Fixed items, repeated draws of 12 labels on the judge's passes and 3 on its fails:
    the estimated label variance averages the variance of the estimate over the draws (the
    centred, unscaled terms gave (k - 1) / k of it per verdict)."""
    rng = np.random.default_rng(4)
    y = (rng.random(4000) < 0.7).astype(float)
    yhat = np.where(y == 1, rng.random(4000) >= 0.1, rng.random(4000) < 0.4).astype(float)
    estimates, variances = [], []
    for _ in range(6000):
        labelled, _ = _queue_draw(rng, yhat, {1.0: 12, 0.0: 3})
        psi, terms = stratified_pseudo_values(yhat, np.where(labelled, y, np.nan))
        estimates.append(psi.mean())
        variances.append(terms.variances(1.0 / len(psi)).sum())
    assert np.mean(variances) / np.var(estimates, ddof=1) == pytest.approx(1.0, abs=0.08)


def test_twenty_labels_among_three_hundred_items_give_about_twenty_degrees_of_freedom() -> None:
    rng = np.random.default_rng(2)
    y = (rng.random(300) < 0.8).astype(float)
    yhat = np.where(y == 1, rng.random(300) >= 0.05, rng.random(300) < 0.35).astype(float)
    labelled, _ = _queue_draw(rng, yhat, {1.0: 16, 0.0: 4})
    est = stratified_mean(yhat, np.where(labelled, y, np.nan))
    assert 3 <= est.df <= 19  # Satterthwaite over two verdicts of 16 and 4 labels


def _coverage(trials: int, take: dict[float, int], seed: int) -> tuple[int, int, int]:
    """Trials whose 95% interval covers the truth, stratified estimator and the former
    (normal limits, unscaled label terms), and the trials run: a lenient judge, 200 items,
    the queue's draw (a trial whose verdict lacks the items to draw is skipped)."""
    rng = np.random.default_rng(seed)
    p, false_pass, false_fail = 0.8, 0.35, 0.05
    covered = former = ran = 0
    z = stats.norm.ppf(0.975)
    for _ in range(trials):
        y = (rng.random(200) < p).astype(float)
        draw = rng.random(200)
        yhat = np.where(y == 1, draw >= false_fail, draw < false_pass).astype(float)
        if any((yhat == v).sum() < k for v, k in take.items()):
            continue
        ran += 1
        labelled, weight = _queue_draw(rng, yhat, take)
        label = np.where(labelled, y, np.nan)
        est = stratified_mean(yhat, label)
        covered += est.low <= p <= est.high
        psi, _ = ppi_pseudo_values(yhat, label, weight)
        se = psi.std(ddof=1) / np.sqrt(len(psi))
        former += abs(psi.mean() - p) <= z * se
    return covered, former, ran


@pytest.mark.parametrize("take", [{1.0: 16, 0.0: 4}, {1.0: 8, 0.0: 2}])
def test_the_stratified_interval_covers_at_nominal_with_few_labels(take) -> None:  # type: ignore[no-untyped-def]
    """Twenty (or ten) labels a rule, the queue's proportional draw: the former normal,
    unscaled interval covers 88% (81%); the stratified one at least 95% within binomial
    bounds for the trial count."""
    covered, former, trials = _coverage(2000, take, seed=11)
    assert trials > 1900
    assert covered >= stats.binom.ppf(0.001, trials, 0.95), covered / trials
    assert former < stats.binom.ppf(0.001, trials, 0.95), former / trials  # what was fixed


def test_the_stratified_interval_covers_at_nominal_with_labels_spread_unevenly() -> None:
    """Twenty labels a rule spread as a Neyman allocation would (twelve on the judge's
    passes, eight on its fails, against 16 / 4 in proportion): still at least 95%."""
    covered, _, trials = _coverage(2000, {1.0: 12, 0.0: 8}, seed=12)
    assert trials > 1900
    assert covered >= stats.binom.ppf(0.001, trials, 0.95), covered / trials


def test_bad_weights_name_the_field() -> None:
    with pytest.raises(ValueError, match="weight"):
        ppi_mean([1.0, 0.0], [1.0, np.nan], [0.5, 1.0])
    with pytest.raises(ValueError, match="judge"):
        ppi_mean([np.nan, 0.0], [1.0, np.nan])
