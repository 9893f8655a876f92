"""The judged half of grading: tasks out to a :class:`JudgeBackend`, verdicts back to rows."""

from __future__ import annotations

import importlib
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

import pandas as pd

from ..store import transcript_hash
from ._errors import GradingError
from ._judge_types import JudgeBackend, JudgedRule, JudgeTask, JudgeVerdict
from ._scorecard import ScorecardRule, canonical_hash
from ._transcripts import Transcripts

__all__ = ["JudgeArg", "grader_name", "judge_rows", "resolve_judge", "with_cache"]

logger = logging.getLogger("evalkit.grading")
JudgeArg: TypeAlias = JudgeBackend | Literal[False] | None
EMULATED_MODEL = "emulator-judge"
_HOW = (
    "the scorecard has judged rules ({rules}) and no judge is configured: set "
    "EVALKIT_JUDGE_MODEL and EVALKIT_JUDGE_BASE_URL (and EVALKIT_JUDGE_API_KEY if the endpoint "
    "needs one), or pass judge=Judge(model=..., base_url=...), or judge=False to leave judged "
    "rules 'na' (not judged)"
)


def resolve_judge(judge: JudgeArg, rules: Sequence[ScorecardRule]) -> JudgeBackend | None:
    """The judge to use: the one given, one from the environment, or None (``judge=False``)."""
    if judge is False or not rules:
        return None
    if judge is not None:
        return judge
    names = ", ".join(r.rule_id for r in rules)
    if not (os.environ.get("EVALKIT_JUDGE_MODEL") and os.environ.get("EVALKIT_JUDGE_BASE_URL")):
        raise GradingError(_HOW.format(rules=names))
    try:
        module = importlib.import_module("evalkit.grading._judge")
    except ImportError:
        raise GradingError(_HOW.format(rules=names) + " (no judge client is installed)") from None
    found: JudgeBackend = module.Judge.from_env()
    return found


def with_cache(judge: JudgeBackend, folder: Path) -> JudgeBackend:
    """The judge with an on-disk cache in ``folder`` when it has none and can take one."""
    setter = getattr(judge, "with_cache_dir", None)
    if getattr(judge, "cache_dir", "unset") is None and callable(setter):
        cached: JudgeBackend = setter(folder)
        return cached
    return judge


def grader_name(model: str) -> str:
    """``judge:<model>``, or ``emulated-judge:<model>`` for the emulator's judge."""
    return f"emulated-judge:{model}" if model == EMULATED_MODEL else f"judge:{model}"


def _tasks(
    t: Transcripts, rules: Sequence[ScorecardRule], skipped: dict[str, set[str]], samples: int
) -> list[JudgeTask]:
    judged = {
        r.rule_id: JudgedRule(r.rule_id, r.title, r.criterion, canonical_hash(_rule_key(r)))
        for r in rules
    }
    recorded = t.column("transcript_hash")
    grouped = dict(iter(t.turns.groupby("conversation_id", sort=False)))
    tasks: list[JudgeTask] = []
    for cid in t.ids:
        turns_frame = grouped.get(cid)
        if turns_frame is None:
            continue  # no transcript: nothing to judge (rows become na)
        wanted = tuple(j for rid, j in judged.items() if cid not in skipped[rid])
        if not wanted:
            continue
        turns = tuple(
            zip(
                turns_frame["index"].tolist(), turns_frame["role"], turns_frame["text"], strict=True
            )
        )
        known = recorded.get(cid) if recorded is not None else None
        digest = known if isinstance(known, str) and known else transcript_hash(turns)
        tasks.extend(JudgeTask(cid, digest, turns, wanted, s) for s in range(samples))
    return tasks


def _rule_key(rule: ScorecardRule) -> dict[str, Any]:
    return {"ruleId": rule.rule_id, "title": rule.title, "criterion": rule.criterion}


def _majority(samples: list[JudgeVerdict]) -> tuple[JudgeVerdict, float]:
    """The majority verdict (ties: the earliest sample's), and the share of samples agreeing."""
    decided = [v for v in samples if v.verdict != "error"] or samples
    counts = Counter(v.verdict for v in decided)
    top = max(counts.values())
    chosen = next(v for v in decided if counts[v.verdict] == top)
    agreement = sum(v.verdict == chosen.verdict for v in samples) / len(samples)
    return chosen, agreement


def _tokens(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


async def judge_rows(
    t: Transcripts,
    rules: Sequence[ScorecardRule],
    judge: JudgeBackend,
    skipped: dict[str, set[str]],
    samples: int,
) -> pd.DataFrame:
    """Ask ``judge`` about ``rules`` on every conversation (``samples`` times each); one row per
    (conversation, rule) asked: verdict, rationale, evidence, grader and judge columns."""
    tasks = _tasks(t, rules, skipped, samples)
    verdicts = await judge.ajudge(tasks) if tasks else []
    by_pair: dict[tuple[str, str], list[JudgeVerdict]] = defaultdict(list)
    for v in verdicts:
        by_pair[(v.conversation_id, v.rule_id)].append(v)
    rows: list[dict[str, Any]] = []
    asked = {(task.conversation_id, r.rule_id) for task in tasks for r in task.rules}
    for cid, rid in sorted(asked):
        got = sorted(by_pair.get((cid, rid), []), key=lambda v: v.sample)
        if not got:
            rows.append(_row(cid, rid, "error", "the judge returned no verdict", judge.model))
            continue
        chosen, agreement = _majority(got)
        rows.append(
            {
                **_row(cid, rid, chosen.verdict, chosen.rationale, chosen.model),
                "evidence_turn": chosen.evidence_turn,
                "prompt_version": chosen.prompt_version,
                "judge_samples": len(got),
                "judge_agreement": agreement,
                "prompt_tokens": _tokens([v.prompt_tokens for v in got]),
                "completion_tokens": _tokens([v.completion_tokens for v in got]),
            }
        )
    return pd.DataFrame(rows)


def _row(cid: str, rid: str, verdict: str, rationale: str, model: str) -> dict[str, Any]:
    return {
        "conversation_id": cid,
        "rule_id": rid,
        "verdict": verdict,
        "rationale": rationale,
        "evidence_turn": None,
        "grader": grader_name(model),
        "judge_model": model,
        "prompt_version": None,
        "judge_samples": None,
        "judge_agreement": None,
        "prompt_tokens": None,
        "completion_tokens": None,
    }
