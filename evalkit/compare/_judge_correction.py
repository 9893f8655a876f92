"""Judge-corrected comparisons: hand labels turned into PPI++ pseudo-values before the
comparison is built, so the headline, the per-rule and per-persona tables and the cells all
rest on corrected rates (Angelopoulos, Duchi & Zrnic 2023; see :mod:`evalkit.stats._ppi`).

Each side's judged rows get ``points_awarded = points x psi`` (:func:`correct_grades`): a
conversation's score is the points-weighted sum of its rules' pseudo-values, so the paired
cell machinery (repeats within cells, cells paired across sides) carries the covariance of
rules that share conversations, of labelled pairs that are also judged, and of the pairing,
with no extra formula. A rule is corrected on both sides or on neither (a corrected rate
against a raw one would compare two instruments); it needs :data:`MIN_LABELS` usable labels
(with an inclusion probability) on each side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..grading import MIN_LABELS, Matched

__all__ = ["JudgeCorrection", "LabelsArg", "apply_labels"]

#: Labels for a comparison: one frame for both sides (matched by conversation id), a
#: (baseline, candidate) pair of frames, or None.
LabelsArg = pd.DataFrame | tuple[pd.DataFrame | None, pd.DataFrame | None] | None

_SIDES = ("baseline", "candidate")


@dataclass(frozen=True)
class JudgeCorrection:
    """What the labels did to a comparison."""

    method: str = "none"  # "ppi++" or "none"
    reason: str = "no labels given"
    rules: tuple[str, ...] = ()  # corrected on both sides
    labelled: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_SIDES, 0))
    without_probability: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_SIDES, 0))
    skipped: dict[str, str] = field(default_factory=dict)  # rule -> why not corrected
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # per side, per rule
    given: bool = False
    usable: int = 0  # labels with a probability on judged pass/fail verdicts, all rules

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
                "the difference are prediction-powered estimates (PPI++)"
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
    out = [m.corrected(set(ready)) for m in matched]
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
    return out, JudgeCorrection(
        method=method,
        reason=reason,
        rules=tuple(ready),
        labelled=labelled,
        without_probability=hand,
        skipped=skipped,
        tables=tables,
        given=True,
        usable=sum(r.labelled for rep in reports for r in rep.values()),
    )
