"""Prediction-powered estimates of a mean: a judge's verdicts on every item, corrected by
hand labels on a random subset (PPI++, Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient
Prediction-Powered Inference", with the power-tuning weight ``lam``).

The labelled items are drawn with known inclusion probabilities ``pi_i`` (the label queue's
stratified draw, or a plain random subset); ``w_i = 1 / pi_i`` for a labelled item and 0
otherwise. With ``e_i = Y_i - lam * Yhat_i`` (label minus weighted judge), the estimate is

    theta = lam * mean(Yhat over all N items) + Delta,    Delta = sum(w e) / sum(w)

(the judge's mean over *every* item, labelled ones included, plus the Hajek-weighted mean
correction). The labelled items appear in both terms, so the two are correlated; rather than
drop the labelled items from the first term, the variance is built from one
influence (pseudo-)value per item,

    psi_i = lam * Yhat_i + Delta + w_i (e_i - Delta),

whose mean is ``theta`` and which is design-unbiased for ``Y_i`` item by item (``E[psi_i] =
Y_i`` over the labelling draw for any fixed ``Delta``). ``var(psi) / N`` carries the overlap's
covariance, and sums of pseudo-values (a score weighting several rules, a mean over a cell's
repeats, a paired cell difference) carry theirs: that is how :mod:`evalkit.compare` builds
judge-corrected scores and differences.

``lam`` minimises the empirical variance of ``psi`` (closed form, ``psi`` is linear in
``lam``), clipped to ``[0, 1]``: ``lam = 0`` is labels alone (the Hajek mean of the labels),
``lam = 1`` trusts the judge fully where its errors average out; a perfect judge gets ``lam =
1`` and ``psi_i = Yhat_i`` (no wider than the judge alone). Against the reference
implementation (``ppi_py.ppi_mean_ci``, which averages the judge over the unlabelled items
only), this estimator with ``lam`` equals theirs with ``lam' = lam * (N - n) / N``; both tune
to the same population optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = ["PPIEstimate", "ppi_difference", "ppi_mean", "ppi_pseudo_values"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: ``estimate`` with its ``confidence`` interval (``low``,
    ``high``; normal limits), standard error ``se``, the power-tuning weight ``lam``, the
    number of items ``n`` and of labelled items ``n_labelled``."""

    estimate: float
    low: float
    high: float
    se: float
    lam: float
    n: int
    n_labelled: int
    confidence: float


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
    yhat, y, w = _inputs(judge, label, weight)
    total = w.sum()
    if total <= 0 or len(yhat) == 0:
        return yhat.copy(), 1.0
    y_w = float((w * y).sum() / total)
    yhat_w = float((w * yhat).sum() / total)
    a = y_w + w * (y - y_w)
    b = (1.0 - w) * (yhat - yhat_w)
    if lam is None:
        bc = b - b.mean()
        denominator = float((bc * bc).sum())
        tuned = -float(((a - a.mean()) * bc).sum()) / denominator if denominator > 0 else 1.0
        lam = min(max(tuned, 0.0), 1.0)
    return a + lam * b, float(lam)


def _limits(estimate: float, se: float, confidence: float) -> tuple[float, float]:
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    return estimate - z * se, estimate + z * se


def ppi_mean(
    judge: ArrayLike,
    label: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The PPI++ estimate of the mean of the labels' quantity over all items, with a normal
    interval from the pseudo-values' variance (``var(psi) / N``; see the module docstring).

    An interval is never zero-width: the variance has a floor, a Bernoulli variance at the
    Jeffreys-smoothed estimate with one pseudo item (``p~ (1 - p~) / (N + 1)``, ``p~ = (N
    theta + 1/2) / (N + 1)``), which only matters when judge and labels agree on every item
    and the judge never varies.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    psi, used = ppi_pseudo_values(judge, label, weight, lam=lam)
    n = len(psi)
    labelled = int((~np.isnan(np.asarray(label, dtype=np.float64))).sum())
    if n == 0:
        return PPIEstimate(math.nan, math.nan, math.nan, math.nan, used, 0, 0, confidence)
    estimate = float(psi.mean())
    variance = float(((psi - estimate) ** 2).sum() / (n * max(n - 1, 1)))
    smoothed = min(max((estimate * n + 0.5) / (n + 1.0), 0.0), 1.0)
    variance = max(variance, smoothed * (1.0 - smoothed) / (n + 1.0) ** 2)
    se = math.sqrt(variance)
    low, high = _limits(estimate, se, confidence)
    return PPIEstimate(estimate, low, high, se, used, n, labelled, confidence)


def ppi_difference(
    baseline: PPIEstimate, candidate: PPIEstimate, *, confidence: float | None = None
) -> PPIEstimate:
    """Candidate minus baseline for two independent sides (their own items and labels):
    variances add. ``lam`` of the result is NaN (each side keeps its own)."""
    level = candidate.confidence if confidence is None else confidence
    estimate = candidate.estimate - baseline.estimate
    se = math.hypot(candidate.se, baseline.se)
    low, high = _limits(estimate, se, level)
    return PPIEstimate(
        estimate,
        low,
        high,
        se,
        math.nan,
        baseline.n + candidate.n,
        baseline.n_labelled + candidate.n_labelled,
        level,
    )
