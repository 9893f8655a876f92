"""The proposer's prompt: a versioned template that shows the current instructions, the
failing rules with their criteria, clustered failure examples and what must not change.

The request travels as a fenced JSON block in the user message (an emulated proposer reads the
block; a real model reads the words around it too), and the answer is one JSON object::

    {"candidates": [{"instructions": "<the whole new prompt>", "rationale": "<why>"}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["PROPOSER_PROMPT_VERSION", "FailingRule", "ProposalRequest", "build_messages"]

PROPOSER_PROMPT_VERSION: Final = "optimize-proposer-v1"

_SYSTEM: Final = (
    "You improve the system prompt of a voice assistant that makes phone calls. You are shown "
    "its current prompt, the scorecard rules its rehearsed calls failed (with each rule's "
    "criterion), clusters of failing calls with short examples, and what must not change. "
    "Propose {k} different candidate prompts, each a complete replacement of the current one "
    "that fixes one or more of the failures with a small, targeted edit. Keep every "
    "{{{{token}}}} listed under must_keep exactly as written, keep the language and the "
    "assistant's role, and do not invent facts. Answer with one JSON object and nothing else: "
    '{{"candidates": [{{"instructions": "<the whole new prompt>", "rationale": "<one '
    'sentence: what the edit fixes>"}}]}}. ({version})'
)


@dataclass(frozen=True)
class FailingRule:
    """A rule the current best failed on the selection cells: how often, and how it failed."""

    rule_id: str
    title: str
    criterion: str | None
    failures: int
    decided: int
    points: float
    clusters: Sequence[Mapping[str, Any]] = ()  # {"label", "conversations", "examples": [...]}

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "title": self.title,
            "criterion": self.criterion,
            "failed": f"{self.failures} of {self.decided} calls",
            "points": self.points,
            "clusters": [dict(c) for c in self.clusters],
        }


@dataclass(frozen=True)
class ProposalRequest:
    """What one round asks its proposer: the current prompt, its failures, what to keep."""

    instructions: str
    failing_rules: Sequence[FailingRule]
    must_keep: Sequence[str] = ()
    candidates: int = 4
    round: int = 1
    notes: Sequence[str] = field(default_factory=tuple)

    def block(self) -> dict[str, Any]:
        """The JSON block the user message carries."""
        return {
            "prompt_version": PROPOSER_PROMPT_VERSION,
            "round": self.round,
            "candidates": self.candidates,
            "instructions": self.instructions,
            "failing_rules": [r.to_json() for r in self.failing_rules],
            "must_keep": list(self.must_keep),
            "notes": list(self.notes),
        }


def build_messages(request: ProposalRequest) -> list[dict[str, str]]:
    """The chat messages of one proposer call."""
    system = _SYSTEM.format(k=request.candidates, version=PROPOSER_PROMPT_VERSION)
    block = json.dumps(request.block(), ensure_ascii=False, indent=1)
    user = (
        f"Round {request.round}. The current prompt, the failing rules (worst first) with "
        "examples from failing calls, and what must not change:\n\n"
        f"```json\n{block}\n```"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
