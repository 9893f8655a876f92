"""``grade_transcripts`` and ``grade_run``: every rule on every conversation, one row each."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from .._sync import run_sync
from ..store import GRADES_SCHEMA, Run
from ._checks import persona_filter, run_check
from ._errors import GradingError
from ._grades import Grades
from ._io import check_rubric_hash, conform_grades, grades_path, write_grades
from ._judging import JudgeArg, judge_rows, resolve_judge, with_cache
from ._scorecard import Scorecard, ScorecardRule
from ._transcripts import Transcripts

__all__ = [
    "GradeOptions",
    "agrade_run",
    "agrade_transcripts",
    "grade_run",
    "grade_transcripts",
]

logger = logging.getLogger("evalkit.grading")
ScorecardLike = Scorecard | Mapping[str, Any] | str | os.PathLike[str]
_VERDICT_POINTS = {"pass": 1.0, "fail": 0.0}


@dataclass(frozen=True, slots=True)
class GradeOptions:
    """Options of :func:`grade_transcripts`.

    ``judge_samples``: times each judged rule is asked (majority verdict, agreement recorded);
    ``run_id``: the run id written on rows when the turns carry none;
    ``judge_cache_dir``: handed to a judge that has no cache yet.
    """

    judge_samples: int = 1
    run_id: str = "transcripts"
    judge_cache_dir: Path | None = None


def _scorecard(scorecard: ScorecardLike) -> Scorecard:
    return Scorecard.validate(scorecard)


def _rule_rows(t: Transcripts, rule: ScorecardRule, result: pd.DataFrame) -> pd.DataFrame:
    grader = f"check:{rule.check_type}"
    return result.reset_index().assign(rule_id=rule.rule_id, grader=grader)


def _not_judged(t: Transcripts, rule: ScorecardRule, reason: str) -> pd.DataFrame:
    out = pd.DataFrame(index=t.ids)
    out["verdict"], out["rationale"], out["evidence_turn"] = "na", reason, pd.NA
    if rule.check is not None:
        out = persona_filter(t, rule.check, out)
    return out.reset_index().assign(rule_id=rule.rule_id, grader="not-judged")


async def _judged(
    t: Transcripts, rules: list[ScorecardRule], judge: JudgeArg, options: GradeOptions
) -> list[pd.DataFrame]:
    backend = resolve_judge(judge, rules)
    if backend is None:
        return [_not_judged(t, r, "not judged") for r in rules]
    if options.judge_cache_dir is not None:
        backend = with_cache(backend, options.judge_cache_dir)
    skipped: dict[str, set[str]] = {}
    frames: list[pd.DataFrame] = []
    for rule in rules:  # persona filters first: those conversations are never sent
        base = _not_judged(t, rule, "no transcript to judge")
        skipped[rule.rule_id] = set(base.loc[base["rationale"].str.startswith("the rule"), "conversation_id"])
        frames.append(base)
    answered = await judge_rows(t, rules, backend, skipped, options.judge_samples)
    if answered.empty:
        return frames
    stacked = pd.concat(frames, ignore_index=True).set_index(["conversation_id", "rule_id"])
    answered = answered.set_index(["conversation_id", "rule_id"])
    for column in answered.columns:
        if column not in stacked.columns:
            stacked[column] = pd.Series(pd.NA, index=stacked.index, dtype="object")
        stacked[column] = stacked[column].astype("object")
    stacked.loc[answered.index, answered.columns] = answered.astype("object")
    return [stacked.reset_index()]


async def _grade(
    t: Transcripts, scorecard: Scorecard, judge: JudgeArg, options: GradeOptions, run_id: Any
) -> pd.DataFrame:
    if options.judge_samples < 1:
        raise ValueError(f"judge_samples must be >= 1, not {options.judge_samples}")
    frames = [_rule_rows(t, r, run_check(t, r.check)) for r in scorecard.deterministic_rules]
    if scorecard.judged_rules:
        frames += await _judged(t, scorecard.judged_rules, judge, options)
    rules = {r.rule_id: r for r in scorecard.rules}
    if frames:
        rows = pd.concat(frames, ignore_index=True)
    else:
        rows = pd.DataFrame(columns=["conversation_id", "rule_id", "verdict"])
    order_c = pd.Series(np.arange(len(t.ids)), index=t.ids)
    order_r = {rid: i for i, rid in enumerate(rules)}
    rows = rows.assign(_c=rows["conversation_id"].map(order_c), _r=rows["rule_id"].map(order_r))
    rows = rows.sort_values(["_c", "_r"], kind="stable").reset_index(drop=True)
    cids = rows["conversation_id"]
    points = rows["rule_id"].map({rid: float(r.points) for rid, r in rules.items()})
    rows["run_id"] = cids.map(run_id) if isinstance(run_id, pd.Series) else run_id
    for column in ("cell_id", "persona_label", "repeat", "transcript_hash"):
        known = t.column(column)
        rows[column] = cids.map(known) if known is not None else None
    rows["rubric_version_id"] = scorecard.rubric_version_id
    rows["title"] = rows["rule_id"].map({rid: r.title for rid, r in rules.items()})
    rows["points"] = points
    rows["points_awarded"] = rows["verdict"].map(_VERDICT_POINTS) * points
    rows["scorecard_hash"] = scorecard.content_hash
    for column in GRADES_SCHEMA.names:
        if column not in rows.columns:
            rows[column] = None
    rows["evidence_turn"] = pd.to_numeric(rows["evidence_turn"], errors="coerce").astype("Int64")
    for column in ("judge_samples", "prompt_tokens", "completion_tokens"):
        rows[column] = pd.to_numeric(rows[column], errors="coerce").astype("Int64")
    rows["judge_agreement"] = pd.to_numeric(rows["judge_agreement"], errors="coerce")
    return conform_grades(rows)


def _run_ids(turns: pd.DataFrame, default: str) -> Any:
    if "run_id" not in turns.columns:
        return default
    ids = turns.drop_duplicates("conversation_id").set_index("conversation_id")["run_id"]
    return ids.astype("object").fillna(default)


async def agrade_transcripts(
    turns: pd.DataFrame,
    scorecard: ScorecardLike,
    judge: JudgeArg = None,
    *,
    conversations: pd.DataFrame | None = None,
    options: GradeOptions | None = None,
) -> Grades:
    """Async :func:`grade_transcripts`."""
    options = options or GradeOptions()
    card = _scorecard(scorecard)
    t = Transcripts.build(turns, conversations)
    frame = await _grade(t, card, judge, options, _run_ids(turns, options.run_id))
    return Grades(frame, card.rubric_version_id)


def grade_transcripts(
    turns: pd.DataFrame,
    scorecard: ScorecardLike,
    judge: JudgeArg = None,
    *,
    conversations: pd.DataFrame | None = None,
    options: GradeOptions | None = None,
) -> Grades:
    """Grade any turns frame (conversation_id, index, role, text) with ``scorecard``.

    ``conversations`` (optional; conversation_id plus any of persona_label, ended_by,
    variables, cell_id, repeat, transcript_hash) decides which conversations are graded and
    feeds the checks that need it. ``judge``: a :class:`JudgeBackend`, ``None`` (from the
    ``EVALKIT_JUDGE_*`` environment; an error when judged rules have no judge) or ``False``
    (judged rules ``na``, "not judged"). Nothing is stored.
    """
    return run_sync(
        lambda: agrade_transcripts(
            turns, scorecard, judge, conversations=conversations, options=options
        )
    )


async def agrade_run(
    run: Run,
    scorecard: ScorecardLike,
    judge: JudgeArg = None,
    *,
    judge_samples: int = 1,
    store: bool = True,
) -> Grades:
    """Async :func:`grade_run`."""
    card = _scorecard(scorecard)
    conversations = run.conversations
    done = conversations[conversations["status"] == "done"]
    if len(done) < len(conversations):
        logger.info(
            "run %s: grading %d done conversation(s) of %d", run.run_id, len(done), len(conversations)
        )
    options = GradeOptions(
        judge_samples=judge_samples, run_id=run.run_id, judge_cache_dir=run.path.parent / ".judge-cache"
    )
    check_rubric_hash(run.path.parent, card.rubric_version_id, card.content_hash)
    t = Transcripts.build(run.turns, done)
    frame = await _grade(t, card, judge, options, run.run_id)
    path = None
    if store:
        path = grades_path(run.path, card.rubric_version_id)
        metadata = {
            "evalkit.rubric_version_id": card.rubric_version_id,
            "evalkit.scorecard_hash": card.content_hash,
        }
        write_grades(frame, path, metadata)
        logger.info("run %s: %d grade(s) written to %s", run.run_id, len(frame), path)
    return Grades(frame, card.rubric_version_id, path)


def grade_run(
    run: Run,
    scorecard: ScorecardLike,
    judge: JudgeArg = None,
    *,
    judge_samples: int = 1,
    store: bool = True,
) -> Grades:
    """Grade the ``done`` conversations of a stored run; never re-simulates.

    Returns :class:`Grades`; with ``store`` (default) writes them atomically to
    ``<run>/grades/<rubricVersionId>.parquet`` (replacing an older grading of that rubric),
    where ``run.grades(rubric_version_id)`` reads them. Works inside a running event loop
    (Jupyter). ``judge`` as in :func:`grade_transcripts`; ``judge_samples=k`` asks the judge k
    times per rule and keeps the majority, recording the agreement.
    """
    if not isinstance(run, Run):
        raise GradingError(f"grade_run needs an evalkit.store.Run, got {type(run).__name__}")
    return run_sync(
        lambda: agrade_run(run, scorecard, judge, judge_samples=judge_samples, store=store)
    )
