"""``judge_agreement``: how well judge verdicts match hand labels, per rule, with intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..stats import wilson_interval
from ._grades import GradesLike, as_grades_frame

__all__ = ["judge_agreement", "wilson_interval"]  # wilson_interval: evalkit.stats's

_CATEGORIES = ("pass", "fail", "na")
_COLUMNS = [
    "rule_id", "n", "n_left_out", "agree", "accuracy", "accuracy_low", "accuracy_high",
    "kappa", "kappa_low", "kappa_high",
]  # fmt: skip


def _kappa(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cohen's kappa of label codes ``a`` and ``b`` (shape (..., n)), along the last axis."""
    k = len(_CATEGORIES)
    observed = (a == b).mean(axis=-1)
    pa_ = np.stack([(a == c).mean(axis=-1) for c in range(k)], axis=-1)
    pb_ = np.stack([(b == c).mean(axis=-1) for c in range(k)], axis=-1)
    expected = (pa_ * pb_).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - expected) / (1 - expected)
    # identical constant labels: agreement is perfect but kappa is undefined
    return np.where(expected >= 1, np.nan, kappa)


def judge_agreement(
    grades: GradesLike,
    labels: pd.DataFrame,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Compare graded verdicts with hand ``labels`` (conversation_id, rule_id, verdict).

    ``grades`` is a :class:`Grades` or a grades frame. Pairs where either side is not pass,
    fail or na (``error``, a typo) or that have no counterpart are left out and counted. One
    row per labelled rule plus ``(all)``: n compared, n_left_out, agree, accuracy with its
    Wilson interval, and Cohen's kappa with a seeded bootstrap interval.
    """
    frame = as_grades_frame(grades)
    graded = frame[["conversation_id", "rule_id", "verdict"]]
    wanted = labels[["conversation_id", "rule_id", "verdict"]]
    both = wanted.merge(
        graded, on=["conversation_id", "rule_id"], how="left", suffixes=("_label", "_judge")
    )
    codes = {c: i for i, c in enumerate(_CATEGORIES)}
    both["a"] = both["verdict_label"].map(codes)
    both["b"] = both["verdict_judge"].map(codes)
    usable = both["a"].notna() & both["b"].notna()
    rng = np.random.default_rng(seed)
    rows = []
    groups = [*both.groupby("rule_id", sort=True), ("(all)", both)]
    for rule_id, group in groups:
        ok = usable.loc[group.index]
        a = group.loc[ok, "a"].to_numpy(dtype=np.int64)
        b = group.loc[ok, "b"].to_numpy(dtype=np.int64)
        n = len(a)
        agree = int((a == b).sum())
        low, high = wilson_interval(agree, n, confidence)
        kappa = float(_kappa(a, b)) if n else math.nan
        k_low = k_high = math.nan
        if n >= 2:
            idx = rng.integers(0, n, size=(n_resamples, n))
            boot = _kappa(a[idx], b[idx])
            boot = boot[~np.isnan(boot)]
            if boot.size:
                tail = (1 - confidence) / 2
                k_low, k_high = (float(q) for q in np.quantile(boot, [tail, 1 - tail]))
        rows.append(
            [rule_id, n, int((~ok).sum()), agree, agree / n if n else math.nan, low, high,
             kappa, k_low, k_high]
        )  # fmt: skip
    return pd.DataFrame(rows, columns=_COLUMNS)
