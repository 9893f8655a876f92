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
import pandas as pd

from ..stats import ppi_mean, ppi_pseudo_values

__all__ = [
    "MIN_LABELS",
    "Matched",
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


@dataclass(frozen=True)
class Matched:
    """One side's grades with their labels, as arrays (computed once per side)."""

    frame: pd.DataFrame
    rule_ids: np.ndarray  # str per row
    judged: np.ndarray  # bool per row
    verdict: np.ndarray  # object per row
    label: np.ndarray  # object per row (NaN when unlabelled)
    probability: np.ndarray  # float per row (NaN when none)

    @classmethod
    def of(cls, frame: pd.DataFrame, labels: pd.DataFrame | None) -> Matched:
        matched = match_labels(frame, labels)
        return cls(
            frame=frame,
            rule_ids=matched["rule_id"].astype(str).to_numpy(),
            judged=is_judged(matched).to_numpy(),
            verdict=matched["verdict"].to_numpy(dtype=object),
            label=matched["label"].to_numpy(dtype=object),
            probability=matched["inclusion_probability"].to_numpy(dtype=np.float64),
        )

    def rules(self) -> list[str]:
        return sorted(set(self.rule_ids[self.judged]))

    def rows(self, rule: str) -> np.ndarray:
        return np.flatnonzero(self.judged & (self.rule_ids == rule))

    def arrays(
        self, rows: np.ndarray, use_labels: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
        """For ``rows``: decided (pass/fail), judge value, label value (NaN unless usable),
        weight, labels without a probability, unusable labels."""
        verdict = self.verdict[rows]
        decided = (verdict == "pass") | (verdict == "fail")
        label = self.label[rows] if use_labels else np.full(len(rows), np.nan, dtype=object)
        probability = self.probability[rows]
        has_label = pd.notna(label)
        with_p = ~np.isnan(probability)
        use = decided & np.isin(label, ["pass", "fail"]) & with_p
        without = int((has_label & ~with_p).sum())
        unusable = int((has_label & with_p & ~use).sum())
        yhat = (verdict == "pass").astype(np.float64)
        y = np.where(use, (label == "pass").astype(np.float64), np.nan)
        weight = np.where(use, 1.0 / np.where(with_p, probability, 1.0), np.nan)
        return decided, yhat, y, weight, without, unusable

    def report(self, min_labels: int = MIN_LABELS) -> list[RuleCorrection]:
        """Per judged rule: whether it has enough labels to be corrected."""
        out = []
        for rule in self.rules():
            decided, _, y, _, without, unusable = self.arrays(self.rows(rule))
            used = int((~np.isnan(y)).sum())
            ok = used >= min_labels
            reason = "" if ok else f"{used} usable label(s), fewer than {min_labels}"
            out.append(
                RuleCorrection(
                    rule, int(decided.sum()), used, without, unusable, np.nan, ok, reason
                )
            )
        return out

    def corrected(self, rules: set[str]) -> pd.DataFrame:
        """The grades with ``rules``' ``points_awarded`` replaced by ``points x psi``."""
        awarded = self.frame["points_awarded"].to_numpy(dtype=np.float64).copy()
        points = self.frame["points"].to_numpy(dtype=np.float64)
        for rule in sorted(rules):
            where = self.rows(rule)
            decided, yhat, y, weight, _, _ = self.arrays(where)
            psi, _ = ppi_pseudo_values(yhat[decided], y[decided], weight[decided])
            rows = where[decided]
            awarded[rows] = points[rows] * psi
        out = self.frame.copy()
        out["points_awarded"] = awarded
        return out

    def table(self, rules: set[str] | None, confidence: float, min_labels: int) -> pd.DataFrame:
        """Per judged rule: raw and corrected pass rates (:func:`correction_table`)."""
        out = []
        for rule in self.rules():
            decided, yhat, y, weight, without, unusable = self.arrays(self.rows(rule))
            n_used = int((~np.isnan(y)).sum())
            row: dict[str, object] = {
                "rule_id": rule,
                "judged": int(decided.sum()),
                "labelled": n_used,
                "labels_without_probability": without,
                "labels_unusable": unusable,
                "judge_pass_rate": float(yhat[decided].mean()) if decided.any() else np.nan,
                "corrected_pass_rate": np.nan,
                "corrected_low": np.nan,
                "corrected_high": np.nan,
                "lam": np.nan,
                "correction": "none",
                "reason": "",
            }
            if n_used < min_labels:
                row["reason"] = f"{n_used} usable label(s), fewer than {min_labels}"
            elif rules is not None and rule not in rules:
                row["reason"] = "not corrected on the other side"
            else:
                est = ppi_mean(yhat[decided], y[decided], weight[decided], confidence=confidence)
                row.update(
                    corrected_pass_rate=est.estimate,
                    corrected_low=max(est.low, 0.0),
                    corrected_high=min(est.high, 1.0),
                    lam=est.lam,
                    correction="ppi++",
                )
            out.append(row)
        return pd.DataFrame(out)


def correct_grades(
    frame: pd.DataFrame, labels: pd.DataFrame | None, *, min_labels: int = MIN_LABELS
) -> tuple[pd.DataFrame, list[RuleCorrection]]:
    """``frame`` with each judged rule's ``points_awarded`` replaced by ``points x psi``
    (module docstring) where the rule has at least ``min_labels`` usable labels; and what
    was done per judged rule."""
    matched = Matched.of(frame, labels)
    report = matched.report(min_labels)
    return matched.corrected({r.rule_id for r in report if r.corrected}), report


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
    return Matched.of(frame, labels).table(None, confidence, min_labels)
