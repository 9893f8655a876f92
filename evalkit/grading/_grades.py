"""``Grades``: the grade rows of one grading, per-conversation scores, per-rule summaries.

Every public function that takes grades takes a :class:`Grades` or its DataFrame alike;
:func:`as_grades_frame` is the one conversion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from .._results import Result, json_records, json_value
from ..stats import wilson_interval
from ..store import StoreLocation
from ._left_out import RuleLeftOut, left_out_words, rules_left_out
from ._score import conversation_points

__all__ = ["UNSTABLE_BELOW", "Grades", "GradesLike", "as_grades_frame", "scores_of"]

#: a judged rule whose mean agreement across samples is below this is flagged unstable
UNSTABLE_BELOW = 0.8
_SCORE_KEYS = ["conversation_id", "cell_id", "persona_label", "repeat"]
_VERDICTS = ("pass", "fail", "na", "error")


@dataclass(frozen=True, repr=False)
class Grades(Result):
    """One grading's result.

    ``frame``: one row per conversation x rule (``evalkit.store.GRADES_SCHEMA``);
    ``summary``: one row per rule (a plain DataFrame: :meth:`by_rule` at 95%, which takes hand
    labels for judge-corrected pass rates and another confidence); ``scores``: one row per
    conversation; ``path``: where the grades were stored (or None);
    ``left_out``: conversations of the run that were not graded (not ``done``), by status.
    ``len(grades)`` counts the conversations graded. In Jupyter a ``Grades`` shows per-rule
    pass rates with Wilson intervals, the conversations graded and left out, and the graders.
    """

    frame: pd.DataFrame
    rubric_version_id: str
    path: StoreLocation | None = None
    left_out: Mapping[str, int] = field(default_factory=dict)
    _scores: list[pd.DataFrame] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def of(cls, grades: GradesLike) -> Grades:
        """``grades`` as a :class:`Grades` (a frame is wrapped; its rubric id is read from it)."""
        if isinstance(grades, Grades):
            return grades
        frame = as_grades_frame(grades)
        ids: list[str] = []
        if "rubric_version_id" in frame.columns:
            ids = sorted({str(i) for i in frame["rubric_version_id"].dropna().unique()})
        return cls(frame, ", ".join(ids) or "(unknown)")

    @property
    def scores(self) -> pd.DataFrame:
        """Per conversation: score (awarded / applicable points x 100), applicable_points,
        n_na, n_error and passed_all (no rule failed or errored)."""
        if not self._scores:
            self._scores.append(scores_of(self.frame))
        return self._scores[0]

    @property
    def n_conversations(self) -> int:
        """Conversations graded (``len(grades)``)."""
        return int(self.frame["conversation_id"].nunique())

    @property
    def graders(self) -> list[str]:
        """Who graded: ``check:<type>`` for deterministic rules, the judge's name for judged."""
        if "grader" not in self.frame.columns:
            return []
        return sorted({str(g) for g in self.frame["grader"].dropna().unique()})

    template = "grades.html"

    @property
    def summary(self) -> pd.DataFrame:
        """Per rule, at 95%: :meth:`by_rule` (which takes hand ``labels`` and another
        ``confidence``)."""
        return self.by_rule()

    @property
    def n(self) -> int:
        """Conversations graded."""
        return self.n_conversations

    @property
    def mean_score(self) -> float:
        """Mean conversation score (NaN when nothing was scored); see :attr:`rules_left_out`
        for rules that no score counts."""
        return float(self.scores["score"].mean()) if len(self.frame) else math.nan

    @property
    def rules_left_out(self) -> list[RuleLeftOut]:
        """Rules with errors and not one ``pass`` or ``fail`` (a judge that never answered):
        every score leaves their points out, so :attr:`mean_score` is not the scorecard's
        score, and the headline says so."""
        return rules_left_out(self.frame)

    @property
    def score_text(self) -> str:
        """``mean score 78.4`` in words, naming the rules it leaves out when some have no
        verdict (``mean score 93.0 without confirms-slot (40 of 100 points; ...)``)."""
        mean = self.mean_score
        if math.isnan(mean):
            return "no score"
        left = self.rules_left_out
        if not left:
            return f"mean score {mean:.1f}"
        total = float(self.frame.drop_duplicates("rule_id")["points"].astype("float64").sum())
        return (
            f"mean score {mean:.1f} without {left_out_words(left, total)}: not the "
            "scorecard's score"
        )

    def by_rule(
        self, labels: pd.DataFrame | None = None, *, confidence: float = 0.95
    ) -> pd.DataFrame:
        """Per rule: title, points, grader, n, pass, fail, na, error, pass_rate (pass /
        (pass+fail)) and its Wilson interval (``pass_rate_low``, ``pass_rate_high``) at
        ``confidence``.

        With hand ``labels`` (conversation_id, rule_id, label, inclusion_probability; a
        :meth:`Run.labels` frame), judged rules also get the judge-corrected pass rate
        (PPI++; :mod:`evalkit.grading._correction`): ``corrected_pass_rate``,
        ``corrected_low``, ``corrected_high``, ``labelled`` (labels used) and ``correction``
        (``ppi++``, or ``none`` with the ``correction_reason``).
        """
        out = self._summary(confidence)
        if labels is None:
            return out
        from ._correction import correction_table

        table = correction_table(self.frame, labels, confidence=confidence).set_index("rule_id")
        extra = pd.DataFrame(
            {
                "corrected_pass_rate": table["corrected_pass_rate"],
                "corrected_low": table["corrected_low"],
                "corrected_high": table["corrected_high"],
                "labelled": table["labelled"],
                "correction": table["correction"],
                "correction_reason": table["reason"],
            }
        )
        merged = out.set_index("rule_id").join(extra)
        merged["labelled"] = merged["labelled"].fillna(0).astype("int64")
        merged["correction"] = merged["correction"].fillna("none")
        merged["correction_reason"] = merged["correction_reason"].fillna(
            "a deterministic check: labels say whether it was right"
        )
        return merged.reset_index()

    def _summary(self, confidence: float) -> pd.DataFrame:
        f = self.frame
        counts = pd.crosstab(f["rule_id"], f["verdict"])
        counts = counts.reindex(columns=list(_VERDICTS), fill_value=0)
        rules = f.drop_duplicates("rule_id").set_index("rule_id")[["title", "points", "grader"]]
        out = rules.join(counts).fillna(0)
        for col in _VERDICTS:
            out[col] = out[col].astype("int64")
        out.insert(3, "n", out[list(_VERDICTS)].sum(axis=1))
        decided = (out["pass"] + out["fail"]).to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            out["pass_rate"] = np.where(decided > 0, out["pass"].to_numpy() / decided, np.nan)
        low, high = wilson_interval(out["pass"].to_numpy(), decided, confidence)
        out["pass_rate_low"] = np.where(decided > 0, low, np.nan)
        out["pass_rate_high"] = np.where(decided > 0, high, np.nan)
        return out.reset_index()

    def judge_stability(self) -> pd.DataFrame:
        """Per judged rule graded with ``judge_samples`` > 1: n conversations, mean and minimum
        agreement with the majority verdict, and ``unstable`` when the mean is below 0.8."""
        f = self.frame[self.frame["judge_samples"].fillna(1) > 1]
        columns = ["rule_id", "n", "judge_samples", "agreement", "min_agreement", "unstable"]
        if f.empty:
            return pd.DataFrame(columns=columns)
        g = f.groupby("rule_id", sort=False)
        out = pd.DataFrame(
            {
                "n": g.size(),
                "judge_samples": g["judge_samples"].max().astype("int64"),
                "agreement": g["judge_agreement"].mean(),
                "min_agreement": g["judge_agreement"].min(),
            }
        )
        out["unstable"] = out["agreement"] < UNSTABLE_BELOW
        return out.reset_index()[columns]

    def __len__(self) -> int:
        return self.n_conversations

    def _left_out_text(self) -> str:
        total = sum(self.left_out.values())
        if not total:
            return "none left out"
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.left_out.items()) if v)
        return f"{total} left out ({parts})"

    def headline(self) -> str:
        """Conversations graded and left out, rules, verdict counts, mean score (and the rules
        it leaves out whole), graders."""
        n_rules = self.frame["rule_id"].nunique()
        verdicts = self.frame["verdict"].value_counts()
        counts = ", ".join(f"{v} {int(verdicts.get(v, 0))}" for v in _VERDICTS)
        where = f", stored at {self.path}" if self.path else ""
        return (
            f"{self.rubric_version_id!r}: {self.n_conversations} conversation(s) graded, "
            f"{self._left_out_text()}, {n_rules} rule(s); {counts}; {self.score_text}; "
            f"graders: {', '.join(self.graders) or 'none'}{where}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Rubric, counts, mean score, the rules it leaves out whole, graders and the per-rule
        table (JSON-ready)."""
        return {
            "rubric_version_id": self.rubric_version_id,
            "conversations": self.n_conversations,
            "left_out": dict(self.left_out),
            "mean_score": json_value(self.mean_score),
            "rules_left_out": [
                {"rule_id": r.rule_id, "points": r.points, "errors": r.errors}
                for r in self.rules_left_out
            ],
            "graders": self.graders,
            "path": None if self.path is None else str(self.path),
            "rules": json_records(self.by_rule()) if len(self.frame) else [],
        }

    def html_context(self) -> dict[str, Any]:
        """Per-rule rows as shown: the pass rate with its Wilson interval in percent."""
        rows = []
        table = self.by_rule() if len(self.frame) else pd.DataFrame()
        for r in table.to_dict("records"):
            rate = r["pass_rate"]
            rows.append(
                {
                    "rule_id": r["rule_id"],
                    "title": r["title"],
                    "points": f"{r['points']:g}",
                    "rate": (
                        f"{100 * rate:.0f}% ({100 * r['pass_rate_low']:.0f}–"
                        f"{100 * r['pass_rate_high']:.0f})"
                        if pd.notna(rate)
                        else "not applicable"
                    ),
                    "counts": [int(r[v]) for v in _VERDICTS],
                    "grader": r["grader"],
                }
            )
        return {
            "rows": rows,
            "verdicts": _VERDICTS,
            "left_out_text": self._left_out_text(),
            "score": self.score_text,
        }


#: What every function that takes grades accepts.
GradesLike: TypeAlias = Grades | pd.DataFrame


def as_grades_frame(grades: GradesLike, name: str = "grades") -> pd.DataFrame:
    """The grades DataFrame of a :class:`Grades` or of a grades frame (returned as it is);
    anything else is a ``TypeError`` naming the argument (``name``) and what it got."""
    if isinstance(grades, Grades):
        return grades.frame
    if isinstance(grades, pd.DataFrame):
        return grades
    raise TypeError(
        f"{name} must be an evalkit.grading.Grades or a grades DataFrame, "
        f"got {type(grades).__name__}"
    )


def scores_of(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-conversation scores of a grades frame (see :attr:`Grades.scores`)."""
    f = frame.assign(
        is_na=frame["verdict"] == "na",
        is_error=frame["verdict"] == "error",
        is_fail=frame["verdict"] == "fail",
    )
    keys = f[_SCORE_KEYS].drop_duplicates("conversation_id")
    keys = keys.assign(conversation_id=keys["conversation_id"].astype(str))
    g = f.assign(conversation_id=f["conversation_id"].astype(str)).groupby(
        "conversation_id", sort=False
    )
    out = conversation_points(frame).rename(columns={"applicable": "applicable_points"})
    out["n_na"] = g["is_na"].sum().astype("int64")
    out["n_error"] = g["is_error"].sum().astype("int64")
    out["passed_all"] = (g["is_fail"].sum() == 0) & (out["n_error"] == 0)
    out = keys.set_index("conversation_id").join(out, how="right").reset_index()
    columns = [*_SCORE_KEYS, "score", "applicable_points", "n_na", "n_error", "passed_all"]
    return out[columns]
