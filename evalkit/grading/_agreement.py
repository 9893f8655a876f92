"""``judge_agreement``: how well judge verdicts match hand labels, per rule, with intervals.

Accuracy carries a Wilson score interval (Wilson 1927). Cohen's kappa (Cohen 1960) and the
F1 score of ``fail`` (the judge's verdict as the prediction, the label as the truth, ``fail``
the positive class; van Rijsbergen 1979) carry percentile bootstrap intervals over labelled
pairs (Efron & Tibshirani 1993), seeded so the same labels give the same intervals.

A bootstrap collapses where the sample has no spread (ten pairs that all agree resample to
ten pairs that all agree), so each bootstrap interval is widened to hold a score interval
that does not: F1 = TP / (TP + (FP + FN) / 2) gets the Wilson interval of that proportion,
and kappa = (p_o - p_e) / (1 - p_e) the accuracy's Wilson limits carried through at the
observed chance agreement ``p_e``. No interval is zero-width. Kappa is undefined (NaN, with
the reason in ``kappa_note``) when the judge or the labels use a single verdict: there is no
agreement beyond chance to measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..stats import wilson_interval
from ..store import Run
from ._grades import GradesLike, as_grades_frame

__all__ = [
    "DRIFT_COLUMNS",
    "AgreementOptions",
    "judge_agreement",
    "judge_drift_table",
    "wilson_interval",
]  # wilson_interval: evalkit.stats's

_CATEGORIES = ("pass", "fail", "na")
_FAIL = _CATEGORIES.index("fail")
_COLUMNS = [
    "rule_id", "n_labelled", "n", "n_left_out", "agree", "accuracy", "accuracy_low",
    "accuracy_high", "f1_fail", "f1_fail_low", "f1_fail_high", "kappa", "kappa_low", "kappa_high",
    "kappa_note",
]  # fmt: skip


@dataclass(frozen=True)
class AgreementOptions:
    """Options of :func:`judge_agreement`: ``confidence`` of every interval; ``n_resamples``
    and ``seed`` of the bootstrap (the same labels and seed give the same intervals)."""

    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(
                f"AgreementOptions.confidence must be in (0, 1), got {self.confidence!r}"
            )
        if isinstance(self.n_resamples, bool) or self.n_resamples < 1:
            raise ValueError(f"AgreementOptions.n_resamples must be >= 1, got {self.n_resamples!r}")


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


def _f1_fail(truth: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """F1 of ``fail`` along the last axis: 2TP / (2TP + FP + FN); NaN when no fail anywhere."""
    tp = ((truth == _FAIL) & (judged == _FAIL)).sum(axis=-1)
    fp = ((truth != _FAIL) & (judged == _FAIL)).sum(axis=-1)
    fn = ((truth == _FAIL) & (judged != _FAIL)).sum(axis=-1)
    denominator = 2 * tp + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), np.nan)


def _percentile(values: np.ndarray, confidence: float) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if not values.size:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def _from_run(
    run: Run, labels: pd.DataFrame | None, rubric: str | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's grades (one scorecard) and its stored labels (or the ``labels`` given)."""
    stored = run.labels() if labels is None else labels
    grades = run.grades(rubric)
    versions = sorted(str(v) for v in pd.unique(grades["rubric_version_id"].dropna()))
    if rubric is None and len(versions) > 1:
        wanted = stored.get("rubric_version_id")
        seen = {str(v) for v in wanted.dropna()} if wanted is not None else set()
        if len(seen & set(versions)) == 1:
            return run.grades(seen.pop()), stored
        raise ValueError(
            f"run {run.run_id} was graded with several scorecards ({', '.join(versions)}): "
            "pass rubric_version_id=<rubric version id>"
        )
    return grades, stored


def _label_frame(labels: pd.DataFrame) -> pd.DataFrame:
    if "label" in labels.columns and "verdict" not in labels.columns:
        labels = labels.rename(columns={"label": "verdict"})
    missing = {"conversation_id", "rule_id", "verdict"} - set(labels.columns)
    if missing:
        raise ValueError(
            f"labels need the columns conversation_id, rule_id and label (or verdict); "
            f"missing {', '.join(sorted(missing))}"
        )
    return labels[["conversation_id", "rule_id", "verdict"]]


def judge_agreement(
    grades: GradesLike | Run,
    labels: pd.DataFrame | None = None,
    rubric_version_id: str | None = None,
    *,
    options: AgreementOptions | None = None,
) -> pd.DataFrame:
    """Compare graded verdicts with hand labels, per rule.

    ``grades`` is a :class:`~evalkit.store.Run` (its grades, and by default the labels stored in
    it: :meth:`Run.labels`; ``rubric_version_id`` picks a scorecard when it was graded with
    several), a
    :class:`Grades` or a grades frame (then ``labels`` is required: conversation_id, rule_id and
    ``label`` or ``verdict``). Pairs where either side is not pass, fail or na (``error``, a
    typo) or that have no counterpart are left out and counted. One row per labelled rule plus
    ``(all)``: n_labelled, n compared, n_left_out, agree, accuracy with its Wilson interval, the
    F1 of ``fail`` and Cohen's kappa, each with a seeded bootstrap interval that a score
    interval keeps from collapsing (module docstring), and ``kappa_note`` (why kappa is NaN).
    ``options`` (an :class:`AgreementOptions`): the confidence, the resamples and the seed.
    """
    opts = options or AgreementOptions()
    confidence, n_resamples, seed = opts.confidence, opts.n_resamples, opts.seed
    if isinstance(grades, Run):
        grades, labels = _from_run(grades, labels, rubric_version_id)
    elif labels is None:
        raise TypeError("judge_agreement needs labels= when given grades rather than a Run")
    frame = as_grades_frame(grades)
    graded = frame[["conversation_id", "rule_id", "verdict"]]
    both = _label_frame(labels).merge(
        graded, on=["conversation_id", "rule_id"], how="left", suffixes=("_label", "_judge")
    )
    codes = {c: i for i, c in enumerate(_CATEGORIES)}
    both["a"] = both["verdict_label"].map(codes)
    both["b"] = both["verdict_judge"].map(codes)
    usable = both["a"].notna() & both["b"].notna()
    rng = np.random.default_rng(seed)
    groups = [*both.groupby("rule_id", sort=True), ("(all)", both)]
    rows = [
        _row(str(rule_id), group, usable.loc[group.index], rng, (confidence, n_resamples))
        for rule_id, group in groups
    ]
    return pd.DataFrame(rows, columns=_COLUMNS)


def _row(
    rule_id: str,
    group: pd.DataFrame,
    ok: pd.Series,
    rng: np.random.Generator,
    settings: tuple[float, int],
) -> list[Any]:
    confidence, n_resamples = settings
    a = group.loc[ok, "a"].to_numpy(dtype=np.int64)
    b = group.loc[ok, "b"].to_numpy(dtype=np.int64)
    n = len(a)
    agree = int((a == b).sum())
    low, high = wilson_interval(agree, n, confidence)
    note = _kappa_note(a, b)
    kappa = float(_kappa(a, b)) if n and not note else math.nan
    f1 = float(_f1_fail(a, b)) if n else math.nan
    k_low = k_high = f_low = f_high = math.nan
    if n >= 2:
        idx = rng.integers(0, n, size=(n_resamples, n))
        if not note:
            k_low, k_high = _percentile(_kappa(a[idx], b[idx]), confidence)
            k_low, k_high = _hull((k_low, k_high), _kappa_score_limits(a, b, (low, high)))
        f_low, f_high = _percentile(_f1_fail(a[idx], b[idx]), confidence)
        if not math.isnan(f1):
            f_low, f_high = _hull((f_low, f_high), _f1_score_limits(a, b, confidence))
    return [
        rule_id, len(group), n, int((~ok).sum()), agree, agree / n if n else math.nan, low, high,
        f1, f_low, f_high, kappa, k_low, k_high, note,
    ]  # fmt: skip


def _kappa_note(a: np.ndarray, b: np.ndarray) -> str:
    """Why kappa is undefined for these codes ('' when it is defined)."""
    if not len(a):
        return "no labelled pairs"
    if len(np.unique(b)) < 2:
        return "undefined: the judge gave one verdict only"
    if len(np.unique(a)) < 2:
        return "undefined: the labels hold one verdict only"
    return ""


def _hull(first: tuple[float, float], second: tuple[float, float]) -> tuple[float, float]:
    lows = [v for v in (first[0], second[0]) if not math.isnan(v)]
    highs = [v for v in (first[1], second[1]) if not math.isnan(v)]
    return (min(lows) if lows else math.nan, max(highs) if highs else math.nan)


def _f1_score_limits(
    truth: np.ndarray, judged: np.ndarray, confidence: float
) -> tuple[float, float]:
    """Wilson limits of F1 read as the proportion TP / (TP + (FP + FN) / 2)."""
    tp = float(((truth == _FAIL) & (judged == _FAIL)).sum())
    wrong = float(((truth == _FAIL) != (judged == _FAIL)).sum())
    low, high = wilson_interval(tp, tp + wrong / 2.0, confidence)
    return float(low), float(high)


def _kappa_score_limits(
    a: np.ndarray, b: np.ndarray, accuracy: tuple[float, float]
) -> tuple[float, float]:
    """Kappa at the accuracy's Wilson limits, chance agreement held at its observed value."""
    k = len(_CATEGORIES)
    expected = float(sum((a == c).mean() * (b == c).mean() for c in range(k)))
    if expected >= 1:
        return math.nan, math.nan
    return (
        max((accuracy[0] - expected) / (1 - expected), -1.0),
        min((accuracy[1] - expected) / (1 - expected), 1.0),
    )


DRIFT_COLUMNS = [
    "rule_id", "n", "agree", "agreement", "agreement_low", "agreement_high", "kappa",
    "kappa_low", "kappa_high", "kappa_note", "pass_rate_a", "pass_rate_a_low",
    "pass_rate_a_high", "pass_rate_b", "pass_rate_b_low", "pass_rate_b_high", "difference",
    "difference_low", "difference_high", "shifted",
]  # fmt: skip


def judge_drift_table(
    grades_a: GradesLike,
    grades_b: GradesLike,
    *,
    confidence: float = 0.95,
    min_effect: float = 5.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Two judges' verdicts on the same transcripts, per judged rule: agreement (Wilson) and
    kappa (as :func:`judge_agreement`, never zero-width, NaN with the reason when undefined),
    the pass rate under each (Wilson), and judge b minus judge a in points with a MOVER
    interval that uses the two judges' correlation on the same conversations (Zou & Donner
    2008; Newcombe 1998's paired method). ``shifted``: the interval excludes zero and the
    estimate is beyond ``min_effect`` points. Pairs where either judge did not say pass or
    fail are left out."""
    from ..stats import mover_difference

    a = as_grades_frame(grades_a)
    b = as_grades_frame(grades_b)
    judged = a.get("grader", pd.Series("", index=a.index)).fillna("").astype(str)
    a = a[~judged.str.startswith("check:")]
    both = a[["conversation_id", "rule_id", "verdict"]].merge(
        b[["conversation_id", "rule_id", "verdict"]],
        on=["conversation_id", "rule_id"],
        suffixes=("_a", "_b"),
    )
    decided = both["verdict_a"].isin(["pass", "fail"]) & both["verdict_b"].isin(["pass", "fail"])
    both = both[decided]
    agreement = judge_agreement(
        both.rename(columns={"verdict_a": "verdict"})[["conversation_id", "rule_id", "verdict"]],
        both.rename(columns={"verdict_b": "label"})[["conversation_id", "rule_id", "label"]],
        options=AgreementOptions(confidence=confidence, seed=seed),
    ).set_index("rule_id")
    rows = []
    for rule, group in both.groupby("rule_id", sort=True):
        ya = (group["verdict_a"] == "pass").to_numpy(dtype=np.float64)
        yb = (group["verdict_b"] == "pass").to_numpy(dtype=np.float64)
        n = len(ya)
        la, ha = wilson_interval(ya.sum(), n, confidence)
        lb, hb = wilson_interval(yb.sum(), n, confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = float(np.corrcoef(ya, yb)[0, 1]) if ya.std() > 0 and yb.std() > 0 else 0.0
        low, high = mover_difference((yb.mean(), lb, hb), (ya.mean(), la, ha), r)
        diff = 100 * float(yb.mean() - ya.mean())
        low, high = 100 * float(low), 100 * float(high)
        g = {str(k): v for k, v in agreement.loc[str(rule)].to_dict().items()}
        rows.append(
            [
                str(rule), n, int(g["agree"]), g["accuracy"], g["accuracy_low"],
                g["accuracy_high"], g["kappa"], g["kappa_low"], g["kappa_high"],
                g["kappa_note"], ya.mean(), la, ha, yb.mean(), lb, hb, diff, low, high,
                bool((low > 0 or high < 0) and abs(diff) > min_effect),
            ]
        )  # fmt: skip
    return pd.DataFrame(rows, columns=DRIFT_COLUMNS)
