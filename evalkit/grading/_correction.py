"""Judge correction, in one place: hand labels turn each judged rule's verdicts into
prediction-powered pseudo-values (:mod:`evalkit.stats._ppi`), for one side's grades
(:meth:`Grades.by_rule` with labels, :func:`~evalkit.grading.plan_labels`) and for the two
sides of a comparison (:func:`apply_labels`, which :func:`evalkit.compare.compare_grades`
calls before it builds its sides).

A corrected row keeps its verdict (so counts, ``na`` and errors stay what the judge said)
and gets ``points_awarded = points x psi``: the conversation's score (awarded over
applicable points) is then the points-weighted sum of its rules' pseudo-values, and every
mean, cell mean and paired difference built from scores sums influence terms that carry
the covariance of rules sharing conversations, of labelled pairs that are also judged, and
of the pairing, with no extra formula.

Which labels correct: a ``pass``/``fail`` label on a judged pair the judge graded ``pass`` or
``fail``, with an ``inclusion_probability`` (a label someone picked by hand has none and is
counted, not used). Deterministic checks are never corrected (labels on them say whether the
check was right). A rule with fewer than :data:`MIN_LABELS` usable labels on a side is left
as judged, with the reason; in a comparison a rule is corrected on both sides or on neither
(a corrected rate against a raw one would compare two instruments).

Which estimator: the stratified one (labels averaged within the judge's pass and fail
verdicts) when each verdict the judge gave on the rule has at least two labels, as the label
queue guarantees; PPI++ with its tuned weight otherwise. Under the queue's draw they give the
same estimate; the stratified form's label variance is unbiased and stays right for labels
from several draws (:mod:`evalkit.stats._ppi`).

Degrees of freedom: a comparison's interval rests on the labels as much as on the
conversations, so :meth:`JudgeCorrection.components` gives each label stratum's variance in
the comparison's units (side x rule x judge verdict, each with its labels) and the comparison
combines them with its design's variance by Satterthwaite (:func:`evalkit.stats.label_df`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..stats import (
    LabelTerms,
    PPIEstimate,
    ppi_mean,
    ppi_values,
    stratified_mean,
    stratified_pseudo_values,
)

__all__ = [
    "MIN_LABELS",
    "JudgeCorrection",
    "LabelParts",
    "LabelsArg",
    "Matched",
    "RuleCorrection",
    "apply_labels",
    "correct_grades",
    "corrected_mean",
    "correction_table",
    "is_judged",
    "match_labels",
]

#: Usable labels a judged rule needs on a side before its rates are corrected.
MIN_LABELS = 10
#: Labels every judge verdict of a rule needs for the stratified estimator.
MIN_PER_VERDICT = 2

#: Labels for a comparison: one frame for both sides (matched by conversation id), a
#: (baseline, candidate) pair of frames, or None.
LabelsArg = pd.DataFrame | tuple[pd.DataFrame | None, pd.DataFrame | None] | None

_SIDES = ("baseline", "candidate")
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


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
    known = pd.MultiIndex.from_frame(table[["conversation_id", "rule_id"]])
    rows = pd.MultiIndex.from_arrays(
        [out["conversation_id"].astype(str), out["rule_id"].astype(str)]
    )
    at = known.get_indexer(rows)
    found = at >= 0
    label = np.where(found, table["label"].to_numpy(dtype=object)[at], np.nan)
    chance = table["inclusion_probability"].to_numpy(dtype=np.float64)[at]
    return out.assign(label=label, inclusion_probability=np.where(found, chance, np.nan))


@dataclass(frozen=True)
class RuleValues:
    """One judged rule's corrected values on one side: the rows (pass/fail verdicts) in the
    frame, their pseudo-values, the label terms, the estimator and ``lam`` (NaN when
    stratified)."""

    rows: IntArray
    psi: FloatArray
    terms: LabelTerms
    estimator: str
    lam: float


@dataclass(frozen=True)
class LabelParts:
    """One side's label terms for a comparison's degrees of freedom, one entry per labelled
    row of a corrected rule: its ``row`` in the side's frame, its ``component`` (rule x judge
    verdict; ``component_rule`` names each component's rule), and its label term ``part``
    (on the pass-rate scale, pass = 1), with each component's ``labelled`` count."""

    row: IntArray
    component: IntArray
    part: FloatArray
    component_rule: tuple[str, ...]
    labelled: IntArray

    @classmethod
    def empty(cls) -> LabelParts:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, np.zeros(0), (), none)

    @classmethod
    def of(cls, values: dict[str, RuleValues]) -> LabelParts:
        rows: list[IntArray] = []
        components: list[IntArray] = []
        parts: list[FloatArray] = []
        rules: list[str] = []
        counts: list[IntArray] = []
        for rule in sorted(values):
            v = values[rule]
            labelled = v.terms.part != 0
            rows.append(v.rows[labelled])
            components.append(v.terms.stratum[labelled] + len(rules))
            parts.append(v.terms.part[labelled])
            rules.extend([rule] * len(v.terms.size))
            counts.append(v.terms.labelled)
        if not rules:
            return cls.empty()
        return cls(
            np.concatenate(rows).astype(np.int64),
            np.concatenate(components).astype(np.int64),
            np.concatenate(parts),
            tuple(rules),
            np.concatenate(counts).astype(np.int64),
        )

    def variances(self, coefficient: FloatArray) -> FloatArray:
        """Per component, the variance of ``sum(coefficient * part)`` over its labels, where
        ``coefficient`` (shaped ``(..., rows)``) is each labelled row's weight in the
        comparison's statistic; shaped ``(..., components)``."""
        x = np.asarray(coefficient, dtype=np.float64) * self.part
        flat = x.reshape(int(np.prod(x.shape[:-1])), len(self.part))
        out = np.stack(
            [
                np.bincount(self.component, weights=r * r, minlength=len(self.component_rule))
                for r in flat
            ]
        )
        return out.reshape((*x.shape[:-1], len(self.component_rule)))


def _stratified(yhat: FloatArray, y: FloatArray) -> bool:
    """Whether every verdict the judge gave has two labels (the stratified estimator)."""
    labelled = ~np.isnan(y)
    counts = [int((labelled & (yhat == v)).sum()) for v in np.unique(yhat)]
    return bool(counts) and min(counts) >= MIN_PER_VERDICT


def _values(rows: IntArray, yhat: FloatArray, y: FloatArray, weight: FloatArray) -> RuleValues:
    """The rule's pseudo-values: stratified (labels weighed equally within a verdict: the
    queue's draws, one or several, are simple random samples within it) when every verdict
    has two labels, else PPI++ with the labels' inclusion probabilities."""
    if _stratified(yhat, y):
        psi, terms = stratified_pseudo_values(yhat, y)
        return RuleValues(rows, psi, terms, "stratified", math.nan)
    psi, terms, lam = ppi_values(yhat, y, weight)
    return RuleValues(rows, psi, terms, "ppi++", lam)


def corrected_mean(
    yhat: FloatArray, y: FloatArray, weight: FloatArray, *, confidence: float = 0.95
) -> PPIEstimate:
    """The corrected pass rate of one rule's pass/fail verdicts (judge values ``yhat``,
    labels ``y`` NaN where unlabelled, ``weight`` 1 / inclusion probability), with the
    estimator :func:`_values` picks."""
    if _stratified(yhat, y):
        return stratified_mean(yhat, y, confidence=confidence)
    return ppi_mean(yhat, y, weight, confidence=confidence)


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

    def values(self, rule: str) -> RuleValues:
        """The rule's corrected values over its pass/fail verdicts."""
        where = self.rows(rule)
        decided, yhat, y, weight, _, _ = self.arrays(where)
        return _values(where[decided], yhat[decided], y[decided], weight[decided])

    def corrected(self, rules: set[str]) -> tuple[pd.DataFrame, LabelParts]:
        """The grades with ``rules``' ``points_awarded`` replaced by ``points x psi``, and
        their label terms."""
        awarded = self.frame["points_awarded"].to_numpy(dtype=np.float64).copy()
        points = self.frame["points"].to_numpy(dtype=np.float64)
        values = {rule: self.values(rule) for rule in sorted(rules)}
        for v in values.values():
            awarded[v.rows] = points[v.rows] * v.psi
        out = self.frame.copy()
        out["points_awarded"] = awarded
        return out, LabelParts.of(values)

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
                "corrected_df": np.nan,
                "lam": np.nan,
                "estimator": "",
                "correction": "none",
                "reason": "",
            }
            if n_used < min_labels:
                row["reason"] = f"{n_used} usable label(s), fewer than {min_labels}"
            elif rules is not None and rule not in rules:
                row["reason"] = "not corrected on the other side"
            else:
                est = corrected_mean(
                    yhat[decided], y[decided], weight[decided], confidence=confidence
                )
                row.update(
                    corrected_pass_rate=est.estimate,
                    corrected_low=max(est.low, 0.0),
                    corrected_high=min(est.high, 1.0),
                    corrected_df=est.df,
                    lam=est.lam,
                    estimator=est.estimator,
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
    corrected, _ = matched.corrected({r.rule_id for r in report if r.corrected})
    return corrected, report


def correction_table(
    frame: pd.DataFrame,
    labels: pd.DataFrame | None,
    *,
    confidence: float = 0.95,
    min_labels: int = MIN_LABELS,
) -> pd.DataFrame:
    """Per judged rule of one grades frame: the judge's pass rate and the corrected one with
    its interval (:func:`evalkit.stats.stratified_mean`, or :func:`evalkit.stats.ppi_mean`
    when a verdict has fewer than two labels, over the rule's pass/fail verdicts; NaN when
    not corrected), its degrees of freedom, labels used and left out, ``lam``, the
    ``estimator`` and the reason when not."""
    return Matched.of(frame, labels).table(None, confidence, min_labels)


@dataclass(frozen=True)
class JudgeCorrection:
    """What the labels did to a comparison, and each side's label terms (``parts``) for its
    degrees of freedom."""

    method: str = "none"  # "ppi++" or "none"
    reason: str = "no labels given"
    rules: tuple[str, ...] = ()  # corrected on both sides
    labelled: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_SIDES, 0))
    without_probability: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_SIDES, 0))
    skipped: dict[str, str] = field(default_factory=dict)  # rule -> why not corrected
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # per side, per rule
    given: bool = False
    usable: int = 0  # labels with a probability on judged pass/fail verdicts, all rules
    parts: tuple[LabelParts, LabelParts] = field(
        default_factory=lambda: (LabelParts.empty(), LabelParts.empty())
    )

    @property
    def sentence(self) -> str:
        """``judge-corrected with 75 + 75 hand labels`` (or '' when not corrected)."""
        if self.method != "ppi++":
            return ""
        b, c = self.labelled["baseline"], self.labelled["candidate"]
        return f"judge-corrected with {b} + {c} hand labels ({', '.join(self.rules)})"

    def summary_fields(self) -> dict[str, Any]:
        return {
            "judge_correction": self.method,
            "judge_correction_reason": self.reason,
            "labelled_baseline": self.labelled["baseline"],
            "labelled_candidate": self.labelled["candidate"],
        }

    def components(
        self, coefficient: Callable[[int, IntArray], FloatArray]
    ) -> tuple[FloatArray, IntArray, tuple[str, ...]]:
        """Every label component of both sides (side x rule x judge verdict): its variance
        in a comparison's statistic, its labels and its rule. ``coefficient(side, rows)``
        gives the weight of those rows of the side's frame in the statistic (shaped
        ``(..., len(rows))``; side 0 is the baseline)."""
        variances: list[FloatArray] = []
        counts: list[IntArray] = []
        rules: list[str] = []
        for i, parts in enumerate(self.parts):
            c = np.asarray(coefficient(i, parts.row), dtype=np.float64)
            variances.append(parts.variances(c))
            counts.append(parts.labelled)
            rules.extend(parts.component_rule)
        shape = np.broadcast_shapes(*(v.shape[:-1] for v in variances))
        return (
            np.concatenate([np.broadcast_to(v, (*shape, v.shape[-1])) for v in variances], -1),
            np.concatenate(counts).astype(np.int64),
            tuple(rules),
        )

    def warnings(self) -> list[str]:
        """Plain sentences: labels left out, rules not corrected (once any label could
        correct), and what the verdict rests on."""
        out: list[str] = []
        hand = sum(self.without_probability.values())
        if not self.usable and not hand:
            return out
        if hand:
            out.append(
                f"{hand} hand label(s) have no inclusion probability (picked by hand, not "
                "from the label queue): counted for agreement, left out of the judge correction"
            )
        for rule, why in sorted(self.skipped.items() if self.usable else ()):
            out.append(f"rule {rule} is not judge-corrected: {why}")
        if self.sentence:
            out.append(
                f"verdicts rest on {self.sentence}: judged rules' pass rates, the scores and "
                "the difference are prediction-powered estimates (PPI++), whose degrees of "
                "freedom come from the labels"
            )
        return out

    def patch_by_rule(self, by_rule: pd.DataFrame) -> pd.DataFrame:
        """``by_rule`` with ``judge_pass_rate_*`` (the judge's raw rates) beside the pass
        rates, which become the corrected ones (with their intervals) where corrected, and
        a ``judge_corrected`` column."""
        out = by_rule.copy()
        corrected = out["rule_id"].isin(self.rules).to_numpy()
        for side in _SIDES:
            column = f"pass_rate_{side}"
            position = out.columns.get_loc(column)
            assert isinstance(position, int)
            out.insert(position, f"judge_pass_rate_{side}", out[column].to_numpy())
            table = self.tables.get(side)
            if table is None or table.empty or not corrected.any():
                continue
            rates = table.set_index("rule_id").reindex(out["rule_id"])
            for suffix, source in (
                ("", "corrected_pass_rate"),
                ("_low", "corrected_low"),
                ("_high", "corrected_high"),
            ):
                values = np.clip(rates[source].to_numpy(dtype=np.float64), 0.0, 1.0)
                out[f"{column}{suffix}"] = np.where(
                    corrected, values, out[f"{column}{suffix}"].to_numpy(dtype=np.float64)
                )
        out["judge_corrected"] = corrected
        return out


def _split(labels: LabelsArg) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    if labels is None:
        return None, None
    if isinstance(labels, tuple):
        if len(labels) != 2:
            raise ValueError("labels: give one frame, or a (baseline, candidate) pair of frames")
        return labels[0], labels[1]
    if isinstance(labels, pd.DataFrame):
        return labels, labels
    raise TypeError(f"labels: expected a DataFrame or a pair of them, got {type(labels).__name__}")


def apply_labels(
    frames: Sequence[pd.DataFrame], labels: LabelsArg, *, confidence: float = 0.95
) -> tuple[list[pd.DataFrame], JudgeCorrection]:
    """The two sides' grades corrected by ``labels`` (module docstring), and what was done."""
    base_labels, cand_labels = _split(labels)
    if base_labels is None and cand_labels is None:
        return list(frames), JudgeCorrection()
    matched = [
        Matched.of(frame, lab)
        for frame, lab in zip(frames, (base_labels, cand_labels), strict=True)
    ]
    reports = [{r.rule_id: r for r in m.report()} for m in matched]
    judged = sorted(set(matched[0].rules()) | set(matched[1].rules()))
    ready = [r for r in judged if all(r in rep and rep[r].corrected for rep in reports)]
    skipped = {}
    for rule in judged:
        if rule in ready:
            continue
        why = [
            f"{side}: {rep[rule].reason}" if rule in rep else f"{side}: not judged"
            for side, rep in zip(_SIDES, reports, strict=True)
            if rule not in rep or not rep[rule].corrected
        ]
        skipped[rule] = (
            "; ".join(why) + f" (needs {MIN_LABELS} labels with a probability on each side)"
        )
    corrected = [m.corrected(set(ready)) for m in matched]
    tables = {
        side: m.table(set(ready), confidence, MIN_LABELS)
        for side, m in zip(_SIDES, matched, strict=True)
    }
    labelled = {
        side: sum(rep[r].labelled for r in ready) for side, rep in zip(_SIDES, reports, strict=True)
    }
    hand = {
        side: sum(r.without_probability for r in rep.values())
        for side, rep in zip(_SIDES, reports, strict=True)
    }
    if ready:
        method, reason = "ppi++", f"{len(ready)} of {len(judged)} judged rule(s) corrected"
    elif not judged:
        method, reason = "none", "no judged rules"
    else:
        method, reason = "none", "no judged rule has enough labels on both sides"
    return [frame for frame, _ in corrected], JudgeCorrection(
        method=method,
        reason=reason,
        rules=tuple(ready),
        labelled=labelled,
        without_probability=hand,
        skipped=skipped,
        tables=tables,
        given=True,
        usable=sum(r.labelled for rep in reports for r in rep.values()),
        parts=(corrected[0][1], corrected[1][1]),
    )
