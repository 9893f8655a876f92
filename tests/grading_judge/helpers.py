"""Tasks, options and judges for the judge tests."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalkit.api import RetryPolicy
from evalkit.grading._judge import Judge
from evalkit.grading._judge_config import JudgeOptions
from evalkit.grading._judge_types import JudgedRule, JudgeTask

from .fake_llm import FakeLLM

MODEL = "judge-model-1"


@dataclass
class Endpoint:
    """A running fake server and its base URL (``.../v1``)."""

    fake: FakeLLM
    base_url: str


def rule(rule_id: str, criterion: str | None = None) -> JudgedRule:
    return JudgedRule(rule_id, f"Title of {rule_id}", criterion, rule_hash=f"hash-{rule_id}")


def task(conversation_id: str, *rule_ids: str, sample: int = 0) -> JudgeTask:
    turns = (
        (1, "agent", f"Hello from {conversation_id}"),
        (2, "caller", "Yes"),
        (3, "agent", "Bye"),
    )
    return JudgeTask(
        conversation_id,
        transcript_hash=f"th-{conversation_id}",
        turns=turns,
        rules=tuple(rule(r) for r in rule_ids),
        sample=sample,
    )


def options(**changes: Any) -> JudgeOptions:
    """Options for tests: no waiting between retries, a short timeout."""
    return replace(
        JudgeOptions(retry=RetryPolicy.no_wait(), timeout=10.0, max_attempts=3), **changes
    )


def make_judge(
    ep: Endpoint, opts: JudgeOptions | None = None, cache_dir: Path | None = None
) -> Judge:
    """A judge of :data:`MODEL` on the fake endpoint."""
    return Judge(MODEL, ep.base_url, options=opts or options(), cache_dir=cache_dir)
