"""Shared test helpers: build turns/conversations frames, and a fake judge backend."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from evalkit.grading import JUDGE_PROMPT_VERSION, JudgeTask, JudgeVerdict


def turns_frame(convs: dict[str, Sequence[tuple[str, str]]]) -> pd.DataFrame:
    """{conversation_id: [(role, text), ...]} as a turns frame."""
    rows = [
        {"conversation_id": cid, "index": i, "role": role, "text": text}
        for cid, turns in convs.items()
        for i, (role, text) in enumerate(turns, start=1)
    ]
    return pd.DataFrame(rows, columns=["conversation_id", "index", "role", "text"])


def conversations_frame(rows: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """{conversation_id: {persona_label, variables (dict), ended_by, ...}} as a frame."""
    out = []
    for cid, row in rows.items():
        item = {"conversation_id": cid, **row}
        if "variables" in item:
            item["variables"] = json.dumps(item["variables"], ensure_ascii=False)
        out.append(item)
    return pd.DataFrame(out)


Decide = Callable[[JudgeTask, str], str]


@dataclass
class FakeJudge:
    """A JudgeBackend: ``decide(task, rule_id)`` gives each verdict; calls are recorded."""

    decide: Decide
    model: str = "fake-judge"
    calls: list[JudgeTask] = field(default_factory=list)

    async def ajudge(self, tasks: Sequence[JudgeTask]) -> list[JudgeVerdict]:
        self.calls.extend(tasks)
        return [
            JudgeVerdict(
                task.conversation_id,
                rule.rule_id,
                task.sample,
                verdict,  # type: ignore[arg-type]
                f"fake says {verdict}",
                1 if verdict != "na" else None,
                self.model,
                JUDGE_PROMPT_VERSION,
                prompt_tokens=10,
                completion_tokens=2,
            )
            for task in tasks
            for rule in task.rules
            for verdict in [self.decide(task, rule.rule_id)]
        ]
