"""Judge-corrected grades: each judged rule's verdicts replaced by PPI++ pseudo-values
(:mod:`evalkit.stats._ppi`) built from the hand labels the label queue drew.

A corrected row keeps its verdict (so counts, ``na`` and errors stay what the judge said)
and gets ``points_awarded = points x psi``: the conversation's score (awarded over
applicable points) is then the points-weighted sum of its rules' pseudo-values, and every
mean, cell mean and paired difference built from scores sums influence terms that carry
the covariance of rules sharing conversations and of the labelled pairs that are also judged.

Which labels correct: a ``pass``/``fail`` label on a judged pair the judge graded ``pass`` or
``fail``, with an ``inclusion_probability`` (a label someone picked by hand has none and is
counted, not used). Deterministic checks are never corrected (labels on them say whether the
check was right). A rule with fewer than :data:`MIN_LABELS` usable labels on a side is left
as judged, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..stats import ppi_mean, ppi_pseudo_values

__all__ = [
    "MIN_LABELS",
    "RuleCorrection",
    "correct_grades",
    "correction_table",
    "is_judged",
    "match_labels",
]

#: Usable labels a judged rule needs on a side before its rates are corrected.
MIN_LABELS = 10


@dataclass(frozen=True)
class RuleCorrection:
    """What the correction did for one judged rule on one side."""

    rule_id: str
    judged: int  # pass/fail verdicts of the judge
    labelled: int  # labels used
    without_probability: int  # labels a person picked by hand: agreement only
    unusable: int  # labels on na/error verdicts, or that say na
    lam: float  # the power-tuning weight (NaN when not corrected)
    corrected: bool
    reason: str  # why not, when not


def is_judged(frame: pd.DataFrame) -> pd.Series:
    """Rows graded by the judge (not a deterministic ``check:``)."""
    grader = frame.get("grader", pd.Series("", index=frame.index)).fillna("").astype(str)
    return ~grader.str.startswith("check:")


def match_labels(frame: pd.DataFrame, labels: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with ``label`` (pass/fail/na or NaN) and ``inclusion_probability`` columns
    from ``labels`` (the latest label per conversation and rule; others ignored)."""
    out = frame.drop(columns=["label", "inclusion_probability"], errors="ignore")
    if labels is None or len(labels) == 0:
        return out.assign(label=np.nan, inclusion_probability=np.nan)
    column = "label" if "label" in labels.columns else "verdict"
    missing = {"conversation_id", "rule_id", column} - set(labels.columns)
    if missing:
        raise ValueError(f"labels: missing column(s) {', '.join(sorted(missing))}")
    probability = (
        pd.to_numeric(labels["inclusion_probability"], errors="coerce")
        if "inclusion_probability" in labels.columns
        else pd.Series(np.nan, index=labels.index)
    )
    bad = probability.notna() & ~((probability > 0) & (probability <= 1))
    if bad.any():
        raise ValueError(
            f"labels: inclusion_probability must be in (0, 1], got {probability[bad].iloc[0]!r}"
        )
    table = pd.DataFrame(
        {
            "conversation_id": labels["conversation_id"].astype(str),
            "rule_id": labels["rule_id"].astype(str),
            "label": labels[column].astype(str).str.strip().str.lower(),
            "inclusion_probability": probability.to_numpy(dtype=np.float64),
        }
    ).drop_duplicates(["conversation_id", "rule_id"], keep="last")
    keys = out[["conversation_id", "rule_id"]].astype(str)
    merged = keys.merge(table, on=["conversation_id", "rule_id"], how="left")
    return out.assign(
        label=merged["label"].to_numpy(), inclusion_probability=merged["inclusion_probability"]
    )


def _rule_arrays(
    rows: pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    verdict = rows["verdict"].to_numpy(dtype=object)
    decided = (verdict == "pass") | (verdict == "fail")
    label = rows["label"].to_numpy(dtype=object)
    probability = rows["inclusion_probability"].to_numpy(dtype=np.float64)
    has_label = pd.notna(label)
    usable_label = np.isin(label, ["pass", "fail"])
    with_p = ~np.isnan(probability)
    use = decided & usable_label & with_p
    without = int((has_label & ~with_p).sum())
    unusable = int((has_label & with_p & ~use).sum())
    yhat = (verdict == "pass").astype(np.float64)
    y = np.where(use, (label == "pass").astype(np.float64), np.nan)
    weight = np.where(use, 1.0 / np.where(with_p, probability, 1.0), np.nan)
    return decided, yhat, y, weight, without, unusable


def correct_grades(
    frame: pd.DataFrame, labels: pd.DataFrame | None, *, min_labels: int = MIN_LABELS
) -> tuple[pd.DataFrame, list[RuleCorrection]]:
    """``frame`` with each judged rule's ``points_awarded`` replaced by ``points x psi``
    (module docstring) where the rule has at least ``min_labels`` usable labels; and what
    was done per judged rule."""
    matched = match_labels(frame, labels)
    judged = is_judged(matched).to_numpy()
    awarded = matched["points_awarded"].to_numpy(dtype=np.float64).copy()
    points = matched["points"].to_numpy(dtype=np.float64)
    report: list[RuleCorrection] = []
    rule_ids = matched["rule_id"].astype(str).to_numpy()
    for rule in sorted(set(rule_ids[judged])):
        where = np.flatnonzero(judged & (rule_ids == rule))
        decided, yhat, y, weight, without, unusable = _rule_arrays(matched.iloc[where])
        n_used = int((~np.isnan(y)).sum())
        judged_n = int(decided.sum())
        if n_used < min_labels:
            reason = f"{n_used} usable label(s), fewer than {min_labels}"
            report.append(
                RuleCorrection(rule, judged_n, n_used, without, unusable, np.nan, False, reason)
            )
            continue
        psi, lam = ppi_pseudo_values(yhat[decided], y[decided], weight[decided])
        rows = where[decided]
        awarded[rows] = points[rows] * psi
        report.append(RuleCorrection(rule, judged_n, n_used, without, unusable, lam, True, ""))
    out = matched.drop(columns=["label", "inclusion_probability"])
    out["points_awarded"] = awarded
    return out, report


def correction_table(
    frame: pd.DataFrame,
    labels: pd.DataFrame | None,
    *,
    confidence: float = 0.95,
    min_labels: int = MIN_LABELS,
) -> pd.DataFrame:
    """Per judged rule of one grades frame: the judge's pass rate and the corrected one with
    its interval (:func:`evalkit.stats.ppi_mean` over the rule's pass/fail verdicts; NaN
    when not corrected), labels used and left out, ``lam`` and the reason when not."""
    matched = match_labels(frame, labels)
    judged = is_judged(matched)
    rows = []
    for rule, group in matched[judged].groupby("rule_id", sort=True):
        decided, yhat, y, weight, without, unusable = _rule_arrays(group)
        n_used = int((~np.isnan(y)).sum())
        raw = float(yhat[decided].mean()) if decided.any() else np.nan
        row = {
            "rule_id": str(rule),
            "judged": int(decided.sum()),
            "labelled": n_used,
            "labels_without_probability": without,
            "labels_unusable": unusable,
            "judge_pass_rate": raw,
            "corrected_pass_rate": np.nan,
            "corrected_low": np.nan,
            "corrected_high": np.nan,
            "lam": np.nan,
            "correction": "none",
            "reason": "",
        }
        if n_used < min_labels:
            row["reason"] = f"{n_used} usable label(s), fewer than {min_labels}"
        else:
            est = ppi_mean(yhat[decided], y[decided], weight[decided], confidence=confidence)
            row.update(
                corrected_pass_rate=est.estimate,
                corrected_low=max(est.low, 0.0),
                corrected_high=min(est.high, 1.0),
                lam=est.lam,
                correction="ppi++",
            )
        rows.append(row)
    return pd.DataFrame(rows)
