"""``Grades``: the grade rows of one grading, per-conversation scores, per-rule summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..store import RemotePath

__all__ = ["UNSTABLE_BELOW", "Grades", "scores_of"]

#: a judged rule whose mean agreement across samples is below this is flagged unstable
UNSTABLE_BELOW = 0.8
_SCORE_KEYS = ["conversation_id", "cell_id", "persona_label", "repeat"]


@dataclass(frozen=True)
class Grades:
    """One grading's result.

    ``frame``: one row per conversation x rule (``evalkit.store.GRADES_SCHEMA``);
    ``scores``: one row per conversation; ``path``: where the grades were stored (or None).
    """

    frame: pd.DataFrame
    rubric_version_id: str
    path: Path | RemotePath | None = None
    _scores: list[pd.DataFrame] = field(default_factory=list, repr=False, compare=False)

    @property
    def scores(self) -> pd.DataFrame:
        """Per conversation: score (awarded / applicable points x 100), applicable_points,
        n_na, n_error and passed_all (no rule failed or errored)."""
        if not self._scores:
            self._scores.append(scores_of(self.frame))
        return self._scores[0]

    def summary(self) -> pd.DataFrame:
        """Per rule: title, points, n, pass, fail, na, error and pass_rate (pass / (pass+fail))."""
        f = self.frame
        counts = pd.crosstab(f["rule_id"], f["verdict"])
        counts = counts.reindex(columns=["pass", "fail", "na", "error"], fill_value=0)
        rules = f.drop_duplicates("rule_id").set_index("rule_id")[["title", "points", "grader"]]
        out = rules.join(counts).fillna(0)
        for col in ("pass", "fail", "na", "error"):
            out[col] = out[col].astype("int64")
        out.insert(3, "n", out[["pass", "fail", "na", "error"]].sum(axis=1))
        decided = (out["pass"] + out["fail"]).replace(0, np.nan)
        out["pass_rate"] = out["pass"] / decided
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
        return len(self.frame)

    def __repr__(self) -> str:
        n_conv = self.frame["conversation_id"].nunique()
        n_rules = self.frame["rule_id"].nunique()
        verdicts = self.frame["verdict"].value_counts()
        counts = ", ".join(
            f"{v} {int(verdicts.get(v, 0))}" for v in ("pass", "fail", "na", "error")
        )
        mean = self.scores["score"].mean()
        score = f"mean score {mean:.1f}" if pd.notna(mean) else "no score"
        where = f", stored at {self.path}" if self.path else ""
        return (
            f"<Grades {self.rubric_version_id!r}: {n_conv} conversation(s) x {n_rules} rule(s); "
            f"{counts}; {score}{where}>"
        )


def scores_of(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-conversation scores of a grades frame (see :attr:`Grades.scores`)."""
    f = frame.assign(
        applicable=frame["points"].where(frame["verdict"].isin(["pass", "fail"]), 0.0),
        is_na=frame["verdict"] == "na",
        is_error=frame["verdict"] == "error",
        is_fail=frame["verdict"] == "fail",
    )
    keys = f[_SCORE_KEYS].drop_duplicates("conversation_id").set_index("conversation_id")
    g = f.groupby("conversation_id", sort=False)
    out = pd.DataFrame(
        {
            "awarded": g["points_awarded"].sum(min_count=0),
            "applicable_points": g["applicable"].sum(),
            "n_na": g["is_na"].sum().astype("int64"),
            "n_error": g["is_error"].sum().astype("int64"),
            "n_fail": g["is_fail"].sum(),
        }
    )
    out["score"] = out["awarded"] / out["applicable_points"].where(out["applicable_points"] > 0)
    out["score"] *= 100
    out["passed_all"] = (out["n_fail"] == 0) & (out["n_error"] == 0)
    out = keys.join(out, how="right").reset_index()
    columns = [*_SCORE_KEYS, "score", "applicable_points", "n_na", "n_error", "passed_all"]
    return out[columns]
