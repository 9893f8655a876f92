"""``compare_judges``: does a new judge (model or prompt) move the verdicts by itself?

Both judges grade the same seeded sample of a run's stored transcripts (judge calls cached
as any grading's are); per judged rule the agreement, kappa, each judge's pass rate and the
shift between them come from :func:`evalkit.grading._agreement.judge_drift_table`.
``evalkit judge-drift`` is the CI gate over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._results import Result
from ..compare import check_levels
from ..grading import (
    Grades,
    JudgeArg,
    Scorecard,
    ScorecardLike,
    grade_transcripts,
    judge_drift_table,
)
from ..store import Run

__all__ = ["JudgeDrift", "JudgeDriftOptions", "compare_judges"]


@dataclass(frozen=True)
class JudgeDriftOptions:
    """Options of :func:`compare_judges`.

    ``sample``: done conversations both judges grade (a seeded draw without replacement; all
    of them when the run has fewer); ``seed``: the draw's and the bootstrap's; ``min_effect``
    (points): a rule whose pass rate moves beyond it is ``shifted``; ``confidence``: of every
    interval.
    """

    sample: int = 200
    seed: int = 0
    min_effect: float = 5.0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if isinstance(self.sample, bool) or self.sample < 1:
            raise ValueError(
                "JudgeDriftOptions.sample must be a positive number of conversations, got "
                f"{self.sample!r}"
            )
        check_levels(self.confidence, self.min_effect, "JudgeDriftOptions")


def _name(judge: JudgeArg) -> str:
    model = getattr(judge, "model", None)
    return str(model) if model else ("environment judge" if judge is None else str(judge))


@dataclass(frozen=True, repr=False)
class JudgeDrift(Result):
    """Two judges on the same transcripts: ``by_rule`` (agreement and kappa with intervals,
    pass rate under each, judge b minus judge a with its interval, ``shifted``), the
    judges' names, the sample size and the settings."""

    by_rule: pd.DataFrame
    judge_a: str
    judge_b: str
    conversations: int
    min_effect: float
    confidence: float
    seed: int

    @property
    def shifted(self) -> list[str]:
        """Rules whose pass rate the new judge moved beyond ``min_effect``."""
        return [str(r) for r in self.by_rule.loc[self.by_rule["shifted"], "rule_id"]]

    @property
    def summary(self) -> pd.DataFrame:
        return self.by_rule

    def headline(self) -> str:
        moved = self.by_rule[self.by_rule["shifted"]]
        if moved.empty:
            return (
                f"{self.judge_b} vs {self.judge_a} on {self.conversations} conversations: no "
                f"judged rule's pass rate shifted by more than {self.min_effect:g} points"
            )
        parts = [
            f"{r.rule_id} {r.difference:+.1f} [{r.difference_low:+.1f}, {r.difference_high:+.1f}]"
            for r in moved.itertuples()
        ]
        return (
            f"{self.judge_b} vs {self.judge_a} on {self.conversations} conversations: "
            f"{len(moved)} of {len(self.by_rule)} judged rule(s) shifted: {'; '.join(parts)}"
        )

    def to_dict(self) -> dict[str, Any]:
        frame = self.by_rule.replace({np.nan: None})
        return {
            "headline": self.headline(),
            "judge_a": self.judge_a,
            "judge_b": self.judge_b,
            "conversations": self.conversations,
            "min_effect": self.min_effect,
            "confidence": self.confidence,
            "seed": self.seed,
            "shifted": self.shifted,
            "by_rule": frame.to_dict("records"),
        }


def compare_judges(
    run: Run,
    scorecard: ScorecardLike,
    judge_a: JudgeArg,
    judge_b: JudgeArg,
    *,
    options: JudgeDriftOptions | None = None,
) -> JudgeDrift:
    """Grade a seeded sample of done conversations of ``run`` with both judges (judged rules
    only matter; checks are graded too, cheaply) and compare them per judged rule. ``judge_a``
    is the current judge, ``judge_b`` the candidate (the two judges are what is compared, so
    they come before the ``*``): differences are b minus a, in points. ``options`` (a
    :class:`JudgeDriftOptions`): the sample size, the seed, ``min_effect`` and
    ``confidence``."""
    if not isinstance(run, Run):
        raise TypeError(
            "compare_judges needs a stored Run (both judges grade its transcripts), got "
            f"{type(run).__name__}"
        )
    opts = options or JudgeDriftOptions()
    sample, seed = opts.sample, opts.seed
    confidence, min_effect = opts.confidence, opts.min_effect
    card = Scorecard.validate(scorecard)
    conversations = run.conversations
    done = conversations[conversations["status"] == "done"]
    if done.empty:
        raise ValueError(f"run {run.run_id} has no done conversations to judge")
    rng = np.random.default_rng(seed)
    ids = sorted(done["conversation_id"].astype(str))
    chosen = set(rng.choice(ids, size=min(sample, len(ids)), replace=False).tolist())
    picked = done[done["conversation_id"].astype(str).isin(chosen)]
    turns = run.turns[run.turns["conversation_id"].astype(str).isin(chosen)]
    graded: list[Grades] = [
        grade_transcripts(turns, card, picked, judge=judge) for judge in (judge_a, judge_b)
    ]
    table = judge_drift_table(
        graded[0], graded[1], confidence=confidence, min_effect=min_effect, seed=seed
    )
    return JudgeDrift(
        by_rule=table,
        judge_a=_name(judge_a),
        judge_b=_name(judge_b),
        conversations=len(picked),
        min_effect=float(min_effect),
        confidence=confidence,
        seed=seed,
    )
