"""``grade_transcripts`` and ``grade_run``: every rule on every conversation, one row each."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._util import content_hash, run_sync
from ..store import (
    GRADES_SCHEMA,
    Run,
    StoreError,
    grades_frame,
    grades_metadata,
    grades_path,
    record_grades_summary,
    write_grades,
)
from ._checks import persona_filter, run_check
from ._errors import GradingError
from ._grades import Grades, scores_of
from ._io import check_rubric_hash
from ._judging import JudgeArg, grader_name, judge_rows, resolve_judge, with_cache
from ._scorecard import Scorecard, ScorecardRule
from ._stored import scorecard_metadata
from ._transcripts import Transcripts

__all__ = [
    "GradeOptions",
    "agrade_run",
    "agrade_transcripts",
    "grade_run",
    "grade_transcripts",
    "left_out_of",
]

logger = logging.getLogger("evalkit.grading")
ScorecardLike = Scorecard | Mapping[str, Any] | str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class GradeOptions:
    """Options of :func:`grade_run` and :func:`grade_transcripts`.

    ``judge_samples``: times each judged rule is asked (majority verdict, agreement recorded);
    ``judge_cache_dir``: handed to a judge that has no cache yet (a run's default:
    ``<run>/.judge-cache``); ``run_id``: the run id written on rows when the turns carry none
    (:func:`grade_transcripts`; a stored run's grades carry its own id). :func:`grade_run`
    only: ``save`` writes the grades into the run folder; ``reuse`` returns stored grades that
    grading again would give back as they are.
    """

    judge_samples: int = 1
    run_id: str = "transcripts"
    judge_cache_dir: Path | None = None
    save: bool = True
    reuse: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.judge_samples, bool) or self.judge_samples < 1:
            raise ValueError(f"GradeOptions.judge_samples must be >= 1, got {self.judge_samples!r}")


def _scorecard(scorecard: ScorecardLike) -> Scorecard:
    return Scorecard.validate(scorecard)


_JUDGE_TEXT = ("judge_model", "prompt_version")
_JUDGE_NUMBERS = ("judge_samples", "judge_agreement", "prompt_tokens", "completion_tokens")


def _checked(t: Transcripts, rule: ScorecardRule) -> pd.DataFrame:
    return run_check(t, rule.check).assign(grader=f"check:{rule.check_type}")


def _not_judged(t: Transcripts, rule: ScorecardRule, reason: str, grader: str) -> pd.DataFrame:
    out = pd.DataFrame(index=t.ids)
    out["verdict"], out["rationale"], out["evidence_turn"] = "na", reason, pd.NA
    out["evidence_turn"] = out["evidence_turn"].astype("Int64")
    if rule.check is not None:
        out = persona_filter(t, rule.check, out)
    return out.assign(grader=grader)


async def _judged(
    t: Transcripts, rules: list[ScorecardRule], judge: JudgeArg, options: GradeOptions
) -> dict[str, pd.DataFrame]:
    """Per judged rule, a frame indexed by conversation id (judge columns where answered)."""
    backend = resolve_judge(judge, rules)
    if backend is None:
        return {r.rule_id: _not_judged(t, r, "not judged", "not-judged") for r in rules}
    if options.judge_cache_dir is not None:
        backend = with_cache(backend, options.judge_cache_dir)
    frames: dict[str, pd.DataFrame] = {}
    skipped: dict[str, set[str]] = {}
    for rule in rules:  # persona filters first: those conversations are never sent
        base = _not_judged(t, rule, "no transcript to judge", grader_name(backend.model))
        skipped[rule.rule_id] = set(base.index[base["rationale"].str.startswith("the rule")])
        frames[rule.rule_id] = base
    answered = await judge_rows(t, rules, backend, skipped, options.judge_samples)
    if answered.empty:
        return frames
    columns = [c for c in answered.columns if c not in ("conversation_id", "rule_id")]
    for rule_id, got in answered.groupby("rule_id", sort=False):
        base = frames[str(rule_id)].astype({"verdict": "object", "rationale": "object"})
        base = base.assign(**{c: None for c in columns if c not in base.columns})
        got = got.set_index("conversation_id")[columns]
        base = base.astype(dict.fromkeys(columns, "object"))
        base.loc[got.index, columns] = got.astype("object")
        frames[str(rule_id)] = base
    return frames


def _per_rule(frames: list[pd.DataFrame], column: str, n_conv: int) -> list[pa.Array]:
    """One column of each per-rule frame as an Arrow array of its ``GRADES_SCHEMA`` type."""
    kind = GRADES_SCHEMA.field(column).type
    parts = []
    for f in frames:
        if column not in f.columns:
            parts.append(pa.nulls(n_conv, kind))
            continue
        if pa.types.is_large_string(kind):
            values = f[column].to_numpy(object)
        else:
            values = pd.to_numeric(f[column], errors="coerce").to_numpy(float, na_value=np.nan)
        array = pa.array(values, from_pandas=True)
        parts.append(array if array.type == kind else array.cast(kind))
    return parts


def _interleave(parts: list[pa.Array], order: pa.Array, kind: pa.DataType) -> pa.Array:
    """Rule-major parts (one per rule) as one conversation-major array."""
    return pa.concat_arrays(parts).take(order) if parts else pa.array([], kind)


def _grade_columns(
    t: Transcripts, scorecard: Scorecard, frames: list[pd.DataFrame], run_id: Any
) -> dict[str, Any]:
    """The grades columns, built in Arrow: per-conversation and per-rule values are taken
    (repeated or tiled) from short arrays, the per-rule frames interleaved with one ``take``."""
    rules = scorecard.rules
    n_conv, n_rules = len(t.ids), len(rules)
    conv = pa.array(np.repeat(np.arange(n_conv, dtype=np.int64), n_rules))
    rule = np.tile(np.arange(n_rules, dtype=np.int64), n_conv)
    order = pa.array((np.arange(n_conv)[:, None] + np.arange(n_rules) * n_conv).ravel())

    def stacked(name: str) -> pa.Array:
        kind = GRADES_SCHEMA.field(name).type
        return _interleave(_per_rule(frames, name, n_conv), order, kind)

    def per_conversation(values: Any) -> pa.Array:
        return pa.array(values, from_pandas=True).take(conv)

    def per_rule(values: list[Any]) -> pa.Array:
        return pa.array(values, pa.large_string()).take(pa.array(rule))

    verdict = stacked("verdict")
    passed = pc.equal(verdict, "pass").to_numpy(zero_copy_only=False)
    failed = pc.equal(verdict, "fail").to_numpy(zero_copy_only=False)
    points = np.array([float(r.points) for r in rules])[rule]
    columns: dict[str, Any] = {
        "run_id": per_conversation(_aligned(run_id, t.ids)),
        "conversation_id": per_conversation(t.ids.to_numpy(object)),
        "rubric_version_id": per_rule([scorecard.rubric_version_id] * n_rules),
        "rule_id": per_rule([r.rule_id for r in rules]),
        "title": per_rule([r.title for r in rules]),
        "points": points,
        "verdict": verdict,
        "points_awarded": np.where(passed, 1.0, np.where(failed, 0.0, np.nan)) * points,
        "scorecard_hash": per_rule([scorecard.content_hash] * n_rules),
    }
    for name in ("cell_id", "persona_label", "repeat", "transcript_hash"):
        known = t.column(name)
        if known is not None:
            columns[name] = per_conversation(known.to_numpy(object))
    for name in ("rationale", "evidence_turn", "grader", *_JUDGE_TEXT, *_JUDGE_NUMBERS):
        columns[name] = stacked(name)
    return columns


async def _grade(
    t: Transcripts, scorecard: Scorecard, judge: JudgeArg, options: GradeOptions, run_id: Any
) -> pd.DataFrame:
    per_rule = {r.rule_id: _checked(t, r) for r in scorecard.deterministic_rules}
    if scorecard.judged_rules:
        per_rule.update(await _judged(t, scorecard.judged_rules, judge, options))
    frames = [per_rule[r.rule_id].reindex(t.ids) for r in scorecard.rules]
    columns = _grade_columns(t, scorecard, frames, run_id)
    return grades_frame(columns, len(t.ids) * len(scorecard.rules))


def _aligned(run_id: Any, ids: pd.Index) -> np.ndarray:
    if isinstance(run_id, pd.Series):
        return run_id.reindex(ids).to_numpy(object)
    return np.full(len(ids), run_id, object)


def _run_ids(turns: pd.DataFrame, default: str) -> Any:
    if "run_id" not in turns.columns:
        return default
    ids = turns.drop_duplicates("conversation_id").set_index("conversation_id")["run_id"]
    return ids.astype("object").fillna(default)


async def agrade_transcripts(
    turns: pd.DataFrame,
    scorecard: ScorecardLike,
    conversations: pd.DataFrame | None = None,
    *,
    judge: JudgeArg = None,
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
    conversations: pd.DataFrame | None = None,
    *,
    judge: JudgeArg = None,
    options: GradeOptions | None = None,
) -> Grades:
    """Grade any turns frame (conversation_id, index, role, text) with ``scorecard``.

    ``conversations`` (optional; conversation_id plus any of persona_label, ended_by,
    variables, cell_id, repeat, transcript_hash) decides which conversations are graded and
    feeds the checks that need it. ``judge``: a :class:`JudgeBackend`, ``None`` (from the
    ``EVALKIT_JUDGE_*`` environment; an error when judged rules have no judge) or ``False``
    (judged rules ``na``, "not judged"). ``options``: a :class:`GradeOptions`. Nothing is
    stored.
    """
    return run_sync(
        lambda: agrade_transcripts(turns, scorecard, conversations, judge=judge, options=options)
    )


async def agrade_run(
    run: Run,
    scorecard: ScorecardLike,
    *,
    judge: JudgeArg = None,
    options: GradeOptions | None = None,
) -> Grades:
    """Async :func:`grade_run`."""
    options = _run_options(run, options)
    card = _scorecard(scorecard)
    conversations = run.conversations
    done = conversations[conversations["status"] == "done"]
    if options.reuse:
        current = _current_grades(run, card, done, judge, options.judge_samples)
        if current is not None:
            logger.info(
                "run %s: grades for %s are current; reused", run.run_id, card.rubric_version_id
            )
            return current
    if len(done) < len(conversations):
        logger.info(
            "run %s: grading %d done conversation(s) of %d",
            run.run_id,
            len(done),
            len(conversations),
        )
    check_rubric_hash(run.local_folder, card.rubric_version_id, card.content_hash)
    t = Transcripts.build(run.turns, done)
    frame = await _grade(t, card, judge, options, run.run_id)
    path = None
    if options.save:
        path = grades_path(run.path, card.rubric_version_id)
        metadata = {
            "evalkit.rubric_version_id": card.rubric_version_id,
            "evalkit.scorecard_hash": card.content_hash,
            **scorecard_metadata(card),
            **_provenance(frame, card, done),
        }
        write_grades(frame, path, metadata)
        scores = scores_of(frame)["score"]
        record_grades_summary(
            run.path, card.rubric_version_id, int(scores.notna().sum()), scores.mean()
        )
        logger.info("run %s: %d grade(s) written to %s", run.run_id, len(frame), path)
    return Grades(frame, card.rubric_version_id, path, left_out_of(conversations))


def _run_options(run: Run, options: GradeOptions | None) -> GradeOptions:
    """A run's grading options: ``options`` honoured (its ``run_id`` must be the run's own; its
    ``judge_cache_dir`` replaces the store's ``.judge-cache``)."""
    given = options or GradeOptions()
    if given.run_id not in (GradeOptions().run_id, run.run_id):
        raise ValueError(
            f"options.run_id={given.run_id!r} is not the run's id {run.run_id!r}: grades of a "
            "stored run carry its own id"
        )
    return replace(
        given,
        run_id=run.run_id,
        judge_cache_dir=given.judge_cache_dir or run.local_folder / ".judge-cache",
    )


def left_out_of(conversations: pd.DataFrame) -> dict[str, int]:
    """Conversations not ``done`` (never graded), counted by status."""
    counts = conversations.loc[conversations["status"] != "done", "status"].value_counts()
    return {str(k): int(v) for k, v in counts.sort_index().items()}


def _transcripts_digest(done: pd.DataFrame) -> str:
    """A digest of which transcripts were graded: (conversation id, transcript hash) pairs."""
    ids = done["conversation_id"].astype("object").fillna("").astype(str).tolist()
    hashes = done["transcript_hash"].astype("object").fillna("").astype(str).tolist()
    return content_hash("\n".join(sorted(f"{i}:{h}" for i, h in zip(ids, hashes, strict=True))))


def _provenance(frame: pd.DataFrame, card: Scorecard, done: pd.DataFrame) -> dict[str, str]:
    """What a stored grading was made from, kept in the parquet footer so reuse is decided
    without reading the grades: the transcripts, the judged rules' graders, errors, samples."""
    judged = frame[frame["rule_id"].isin([r.rule_id for r in card.judged_rules])]
    samples = judged["judge_samples"].dropna()
    judge = {
        "graders": sorted(set(judged["grader"])),
        "errors": int((judged["verdict"] == "error").sum()),
        "samples": int(samples.max()) if len(samples) else 1,
    }
    return {
        "evalkit.transcripts_digest": _transcripts_digest(done),
        "evalkit.judge": json.dumps(judge, sort_keys=True),
    }


def _current_grades(
    run: Run, card: Scorecard, done: pd.DataFrame, judge: JudgeArg, judge_samples: int
) -> Grades | None:
    """The run's stored grades when grading again would give them back: the same scorecard
    (rubric version and rules), the same done transcripts, judged rules graded by the judge asked
    for (any judge when ``judge`` is None) with the same samples and no ``error`` (errors are
    retried, never cached). Decided from the grades file's footer; only then is it read."""
    path = grades_path(run.path, card.rubric_version_id)
    if not path.is_file():
        return None
    try:
        meta = grades_metadata(path)
        recorded = json.loads(meta.get("evalkit.judge", ""))
    except (StoreError, ValueError):
        return None
    if meta.get("evalkit.scorecard_hash") != card.content_hash:
        return None
    if meta.get("evalkit.transcripts_digest") != _transcripts_digest(done):
        return None
    if card.judged_rules and not _same_judge(recorded, judge, judge_samples):
        return None
    stored = run.grades(card.rubric_version_id)
    return Grades(stored, card.rubric_version_id, path, left_out_of(run.conversations))


def _same_judge(recorded: dict[str, Any], judge: JudgeArg, judge_samples: int) -> bool:
    graders = set(recorded.get("graders", []))
    if recorded.get("errors", 1):
        return False  # errors are retried, never kept
    if judge is False:
        return graders <= {"not-judged"}
    if "not-judged" in graders:
        return False
    if recorded.get("samples", 1) != judge_samples:
        return False
    return judge is None or graders <= {grader_name(judge.model)}


def grade_run(
    run: Run,
    scorecard: ScorecardLike,
    *,
    judge: JudgeArg = None,
    options: GradeOptions | None = None,
) -> Grades:
    """Grade the ``done`` conversations of a stored run; never re-simulates.

    Returns :class:`Grades`; with ``options.save`` (default) writes them atomically to
    ``<run>/grades/<rubricVersionId>.parquet`` (replacing an older grading of that rubric),
    where ``run.grades(rubric_version_id)`` reads them. Works inside a running event loop
    (Jupyter). ``judge`` as in :func:`grade_transcripts`. With ``options.reuse`` (default)
    stored grades that grading again would give back (same scorecard, same done transcripts,
    the same judge with no errors) are returned as they are: a re-grade costs a parquet read.
    ``options`` (a :class:`GradeOptions`) holds every knob: ``save``, ``reuse``,
    ``judge_samples`` (ask the judge k times per rule and keep the majority, recording the
    agreement) and ``judge_cache_dir``; its ``run_id`` must be the run's.
    """
    if not isinstance(run, Run):
        raise GradingError(f"grade_run needs an evalkit.store.Run, got {type(run).__name__}")
    return run_sync(lambda: agrade_run(run, scorecard, judge=judge, options=options))
