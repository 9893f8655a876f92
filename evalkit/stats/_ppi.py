"""Prediction-powered estimates of a mean: a judge's verdicts on every item, corrected by
hand labels on a random subset.

Two estimators, both built from one influence (pseudo-)value per item so that sums of them
(a score weighting several rules, a mean over a cell's repeats, a paired cell difference)
carry their covariances; that is how :mod:`evalkit.compare` builds judge-corrected scores
and differences.

**PPI++** (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient Prediction-Powered
Inference", with the power-tuning weight ``lam``). The labelled items are drawn with known
inclusion probabilities ``pi_i``; ``w_i = 1 / pi_i`` for a labelled item and 0 otherwise.
With ``e_i = Y_i - lam * Yhat_i`` (label minus weighted judge), the estimate is

    theta = lam * mean(Yhat over all N items) + Delta,    Delta = sum(w e) / sum(w)

(the judge's mean over *every* item, labelled ones included, plus the Hajek-weighted mean
correction), and each item's pseudo-value

    psi_i = lam * Yhat_i + Delta + w_i (e_i - Delta)

has mean ``theta`` and is design-unbiased for ``Y_i`` (``E[psi_i] = Y_i`` over the labelling
draw for any fixed ``Delta``). ``lam`` minimises the empirical variance of ``psi`` (closed
form), clipped to ``[0, 1]``: 0 is labels alone, 1 trusts the judge where its errors average
out. Against the reference implementation (``ppi_py.ppi_mean_ci``, which averages the judge
over the unlabelled items only) this estimator with ``lam`` equals theirs with ``lam' = lam *
(N - n) / N``; both tune to the same population optimum.

**Stratified** (stratified PPI with the judge's verdict as the stratum: Fisch et al. 2024,
"Stratified Prediction-Powered Inference for Hybrid Language Model Evaluation"; Cochran
1977, *Sampling Techniques*, ch. 5). Within a stratum the judge says one thing, so the
stratum's estimate is the (Hajek) mean of its labels ``ybar_h``, and ``theta = sum_h (N_h /
N) ybar_h``. Pseudo-values are ``psi_i = ybar_h + c_h w_i (Y_i - ybar_h)`` (the second term on
labelled items only, with the stratum's weights scaled to sum to ``N_h``), with ``c_h =
sqrt(k_h / (k_h - 1))`` for a stratum of ``k_h`` labels: the label term is centred within its
stratum, so ``c_h`` leaves ``theta`` alone and makes the label term's variance Cochran's
unbiased ``s_h^2 / k_h`` instead of ``(k_h - 1) / k_h`` of it (what a centred term left
unscaled gives; 2/3 of it in a stratum of three labels). When the labels were drawn by the
label queue (a stratified draw by judge verdict), PPI++'s tuned ``lam`` is the within-stratum
slope and the two estimates and pseudo-values coincide; the stratified form also stays right
when the labels come from more than one draw (its weights are recounted within each
stratum) and gives each stratum its own variance, floor and degrees of freedom.

**Degrees of freedom.** The interval is Student's t. Its variance has a judge part, spread
over the ``N`` items (``N - 1`` degrees of freedom), and a label part that rests on the
labels alone: per stratum ``k_h - 1`` degrees of freedom. They combine by Satterthwaite
(1946; Cochran 1977, §5.4, the effective degrees of freedom of a stratified variance),
``df = V^2 / (V_J^2 / (N - 1) + sum_h V_h^2 / (k_h - 1))``, so twenty labels among 300 items
give an interval with about twenty degrees of freedom, not three hundred.

**Floor.** Observed zero spread is not zero uncertainty. Floors are Bernoulli variances at a
Jeffreys-smoothed rate with one pseudo observation, each with its own count. The whole
variance is at least that of a mean of ``N`` verdicts, ``p~ (1 - p~) / (N + 1)`` with ``p~ =
(N theta + 1/2) / (N + 1)`` (the variance of the *mean*: dividing once more by ``N + 1``
would floor one item's variance instead, and leave a 50-item rule whose verdicts all pass at
+-0.4 points). The labels' part, which rests on the ``k`` labels and not the ``N`` items, is
at least ``W_h^2 q~_h (1 - q~_h) / (k_h + 1)`` per verdict stratum, ``q~_h = (D_h + 1/2) /
(k_h + 1)`` with ``D_h`` the stratum's labels that disagree with the judge (which also
smooths the variance of a stratum whose few labels show one rare error); for PPI++, which
has no strata, the floor that no disagreement leaves (``D = 0`` over its ``n`` labels). Ten
labels that all agree with a judge that passes every item then give about +-14 points (its
false-pass rate may still be 26%), however many items were judged: what ten labels can show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = [
    "LabelTerms",
    "PPIEstimate",
    "label_df",
    "ppi_mean",
    "ppi_pseudo_values",
    "stratified_mean",
    "stratified_pseudo_values",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: ``estimate`` with its ``confidence`` interval (``low``,
    ``high``; Student's t limits at ``df``), standard error ``se``, the degrees of freedom
    ``df`` (Satterthwaite, from the labels; module docstring), the power-tuning weight ``lam``
    (NaN for the stratified estimator), the number of items ``n`` and of labelled items
    ``n_labelled``, and the ``estimator`` (``ppi++`` or ``stratified``)."""

    estimate: float
    low: float
    high: float
    se: float
    df: float
    lam: float
    n: int
    n_labelled: int
    confidence: float
    estimator: str


@dataclass(frozen=True)
class LabelTerms:
    """The labels' part of a set of pseudo-values, by stratum.

    ``stratum``: each item's stratum (a position in the per-stratum arrays); ``part``: each
    item's label term (0 where unlabelled; its square summed over a stratum is that stratum's
    share of the variance of the items' sum); ``size``, ``labelled``: per stratum, the items
    ``N_h`` and the labels ``k_h``; ``floor``: per stratum, the least variance its labels
    leave in the items' mean (module docstring). A single stratum for PPI++.
    """

    stratum: IntArray
    part: FloatArray
    size: IntArray
    labelled: IntArray
    floor: FloatArray

    def variances(self, coefficient: ArrayLike = 1.0) -> FloatArray:
        """Per stratum, the label term's variance of ``sum(coefficient * psi)``."""
        x = np.asarray(coefficient, dtype=np.float64) * self.part
        return np.bincount(self.stratum, weights=x * x, minlength=len(self.size)).astype(np.float64)


def bernoulli_floor(share: ArrayLike, errors: ArrayLike, labelled: ArrayLike) -> FloatArray:
    """The variance floor of a stratum's labels in a mean: ``W_h^2 q~ (1 - q~) / (k_h + 1)``
    at the Jeffreys-smoothed rate ``q~ = (errors + 1/2) / (k_h + 1)`` (module docstring)."""
    k = np.asarray(labelled, dtype=np.float64)
    q = (np.asarray(errors, dtype=np.float64) + 0.5) / (k + 1.0)
    w = np.asarray(share, dtype=np.float64)
    return np.asarray(w * w * q * (1.0 - q) / (k + 1.0))


def _inputs(
    judge: ArrayLike, label: ArrayLike, weight: ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    yhat = np.asarray(judge, dtype=np.float64).ravel()
    y = np.asarray(label, dtype=np.float64).ravel()
    if y.shape != yhat.shape:
        raise ValueError(f"judge and label need one value per item ({len(yhat)} vs {len(y)})")
    if np.isnan(yhat).any():
        raise ValueError("judge: every item needs the judge's value (NaN found)")
    labelled = ~np.isnan(y)
    if weight is None:  # a simple random subset: pi = n / N for every item
        w = labelled * (len(y) / max(int(labelled.sum()), 1))
    else:
        w = np.asarray(weight, dtype=np.float64).ravel()
        if w.shape != y.shape:
            raise ValueError("weight: one inverse inclusion probability per item")
        if (labelled & ~(np.nan_to_num(w, nan=0.0) >= 1.0)).any():
            raise ValueError(
                "weight: a labelled item's weight is 1 / inclusion_probability, so at least 1"
            )
        w = np.where(labelled, w, 0.0)
    return yhat, np.where(labelled, y, 0.0), w


def _tuned(a: FloatArray, b: FloatArray) -> float:
    """The ``lam`` minimising the empirical variance of ``a + lam b``, clipped to [0, 1]."""
    bc = b - b.mean()
    denominator = float((bc * bc).sum())
    tuned = -float(((a - a.mean()) * bc).sum()) / denominator if denominator > 0 else 1.0
    return min(max(tuned, 0.0), 1.0)


def _ppi_parts(
    judge: ArrayLike, label: ArrayLike, weight: ArrayLike | None, lam: float | None
) -> tuple[FloatArray, FloatArray, float, FloatArray, FloatArray]:
    """PPI++'s judge part ``lam Yhat + Delta``, label part ``w (e - Delta)``, ``lam``, and
    the judge and label values (labels 0 where unlabelled; ``w`` 0 there)."""
    yhat, y, w = _inputs(judge, label, weight)
    total = w.sum()
    if total <= 0 or len(yhat) == 0:
        return yhat.copy(), np.zeros_like(yhat), 1.0, yhat, w
    y_w = float((w * y).sum() / total)
    yhat_w = float((w * yhat).sum() / total)
    if lam is None:
        lam = _tuned(y_w + w * (y - y_w), (1.0 - w) * (yhat - yhat_w))
    delta = y_w - lam * yhat_w
    return lam * yhat + delta, w * (y - lam * yhat - delta), float(lam), yhat, w


def ppi_pseudo_values(
    judge: ArrayLike,
    label: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    lam: float | None = None,
) -> tuple[FloatArray, float]:
    """Per-item PPI++ pseudo-values ``psi`` (module docstring) and the ``lam`` used.

    ``judge``: the judge's value on every item (1 pass, 0 fail); ``label``: the hand label,
    NaN where unlabelled; ``weight``: ``1 / inclusion_probability`` per item (read only where
    labelled; None: a simple random subset, ``pi = n / N``). ``lam`` None tunes it. The mean of
    the pseudo-values is the estimate; with no labels they are the judge's values.
    """
    judged, part, used, _, _ = _ppi_parts(judge, label, weight, lam)
    return judged + part, used


def ppi_values(
    judge: ArrayLike,
    label: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    lam: float | None = None,
) -> tuple[FloatArray, LabelTerms, float]:
    """PPI++ pseudo-values (:func:`ppi_pseudo_values`), their label terms (one stratum) and
    the ``lam`` used."""
    judged, part, used, yhat, w = _ppi_parts(judge, label, weight, lam)
    k = np.asarray([int((w > 0).sum())], dtype=np.int64)
    # the floor that no disagreement leaves (none without labels: nothing is corrected)
    floor = bernoulli_floor(1.0, 0.0, k) * (k > 0)
    terms = LabelTerms(np.zeros(len(yhat), dtype=np.int64), part, np.asarray([len(yhat)]), k, floor)
    return judged + part, terms, used


def _strata_of(judge: FloatArray) -> tuple[IntArray, int]:
    values, codes = np.unique(judge, return_inverse=True)
    return codes.astype(np.int64).ravel(), len(values)


def stratified_pseudo_values(
    judge: ArrayLike, label: ArrayLike, weight: ArrayLike | None = None
) -> tuple[FloatArray, LabelTerms]:
    """Per-item pseudo-values of the stratified estimator (strata: the judge's distinct
    values; module docstring) and their label terms.

    Arguments as for :func:`ppi_pseudo_values`. Every stratum needs at least two labels
    (a ``ValueError`` names the stratum otherwise): with fewer there is no spread to scale.
    """
    yhat, y, w = _inputs(judge, label, weight)
    labelled = w > 0
    codes, n_strata = _strata_of(yhat)
    size = np.bincount(codes, minlength=n_strata).astype(np.int64)
    k = np.bincount(codes[labelled], minlength=n_strata).astype(np.int64)
    if (k < 2).any():
        h = int(np.flatnonzero(k < 2)[0])
        raise ValueError(
            f"label: the stratum where the judge says {float(np.unique(yhat)[h]):g} has "
            f"{int(k[h])} label(s); the stratified estimator needs at least 2 in each"
        )
    weight_sum = np.bincount(codes, weights=w, minlength=n_strata)
    scaled = w * (size / weight_sum)[codes]  # a stratum's weights sum to its size
    mean = np.bincount(codes, weights=scaled * y, minlength=n_strata) / size
    scale = np.sqrt(k / (k - 1.0))
    part = np.where(labelled, scale[codes] * scaled * (y - mean[codes]), 0.0)
    disagree = np.bincount(codes, weights=labelled * (np.abs(y - yhat) > 0.5), minlength=n_strata)
    terms = LabelTerms(codes, part, size, k, bernoulli_floor(size / len(yhat), disagree, k))
    return mean[codes] + part, terms


def label_df(
    variance: float, judge_df: float, label_variances: ArrayLike, labelled: ArrayLike
) -> float:
    """Satterthwaite's degrees of freedom of ``variance`` (module docstring): the label
    terms' ``label_variances`` with ``labelled - 1`` degrees of freedom each, the rest of
    ``variance`` with ``judge_df``. Infinite when nothing is left to estimate."""
    v = np.asarray(label_variances, dtype=np.float64)
    dof = np.asarray(labelled, dtype=np.float64) - 1.0
    keep = (v > 0) & (dof > 0)
    rest = max(variance - float(v[keep].sum()), 0.0)
    denominator = float((v[keep] ** 2 / dof[keep]).sum())
    if judge_df > 0 and math.isfinite(judge_df):
        denominator += rest * rest / judge_df
    if denominator <= 0 or variance <= 0:
        return math.inf
    return variance * variance / denominator


def _estimate(
    psi: FloatArray,
    terms: LabelTerms,
    judge_floor: float,
    confidence: float,
    lam: float,
    estimator: str,
) -> PPIEstimate:
    n = len(psi)
    labelled = int(terms.labelled.sum())
    if n == 0:
        nan = math.nan
        return PPIEstimate(nan, nan, nan, nan, nan, lam, 0, 0, confidence, estimator)
    estimate = float(psi.mean())
    variance = float(((psi - estimate) ** 2).sum() / (n * max(n - 1, 1)))
    label_parts = terms.variances(1.0 / n)
    floored = np.maximum(label_parts, terms.floor)
    variance = max(variance + float((floored - label_parts).sum()), judge_floor)
    df = label_df(variance, n - 1.0, floored, terms.labelled) if labelled else n - 1.0
    se = math.sqrt(variance)
    half = float(stats.t.ppf(0.5 + confidence / 2.0, max(df, 1.0))) * se
    return PPIEstimate(
        estimate, estimate - half, estimate + half, se, df, lam, n, labelled, confidence, estimator
    )


def _judge_floor(estimate: float, n: int) -> float:
    smoothed = min(max((estimate * n + 0.5) / (n + 1.0), 0.0), 1.0)
    return smoothed * (1.0 - smoothed) / (n + 1.0)


def _check(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def ppi_mean(
    judge: ArrayLike,
    label: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The PPI++ estimate of the mean of the labels' quantity over all items, with a
    Student's t interval from the pseudo-values' variance (``var(psi) / N``), the labels'
    Satterthwaite degrees of freedom and the variance floor (module docstring)."""
    _check(confidence)
    psi, terms, used = ppi_values(judge, label, weight, lam=lam)
    mean = float(psi.mean()) if len(psi) else math.nan
    return _estimate(psi, terms, _judge_floor(mean, len(psi)), confidence, used, "ppi++")


def stratified_mean(
    judge: ArrayLike,
    label: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The stratified estimate (strata: the judge's values; module docstring) with a
    Student's t interval: unbiased stratum variances, per-stratum floors and Satterthwaite
    degrees of freedom. Arguments as for :func:`ppi_mean`; each stratum needs two labels."""
    _check(confidence)
    psi, terms = stratified_pseudo_values(judge, label, weight)
    mean = float(psi.mean()) if len(psi) else math.nan
    return _estimate(psi, terms, _judge_floor(mean, len(psi)), confidence, math.nan, "stratified")
