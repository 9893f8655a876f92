"""The persona generator's prompt: a versioned template asking for one persona per requested
trait combination, for the assistant under test and the scorecard it is graded by.

The request travels as a fenced JSON block in the user message (an emulated generator reads
the block; a real model reads the words around it too), and the answer is one JSON object::

    {"personas": [{"id": "p1", "label": "...", "description": "...", "behavior": "..."}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .._chat import MalformedAnswer, extract_json_object

__all__ = [
    "GENERATOR_PROMPT_VERSION",
    "GenerationRequest",
    "PersonaAsk",
    "build_messages",
    "read_personas",
]

GENERATOR_PROMPT_VERSION: Final = "persona-generator-v1"

_SYSTEM: Final = (
    "You write caller personas for rehearsing a phone voice assistant: each persona is the "
    "system prompt of the simulated person who picks up. You are shown what the assistant is "
    "told to do, the scorecard rules its calls are graded by, and a list of requested callers, "
    "each a set of traits. For every request write one persona: a short unique label "
    "(lower-case words joined by hyphens), a one-sentence description for people, and a "
    "behavior addressed to the caller in the second person: who they are, how they speak (with "
    "one or two example lines in their language and script), what they want, how they react "
    "to a good and to a bad agent, and when they end the call. Show every requested trait "
    "plainly; do not add traits that were not asked for. Keep each behavior under "
    "{max_chars} characters, write no {{{{tokens}}}}, names of real people, phone numbers, "
    "keys or passwords. Answer with one JSON object and nothing else: "
    '{{"personas": [{{"id": "<the request id>", "label": "...", "description": "...", '
    '"behavior": "..."}}]}}. ({version})'
)


@dataclass(frozen=True)
class PersonaAsk:
    """One requested caller: its id in the request, its traits (axis -> value) and the words
    that describe each value."""

    id: str
    traits: Mapping[str, str]
    describe: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "traits": dict(self.traits), "describe": dict(self.describe)}


@dataclass(frozen=True)
class GenerationRequest:
    """What one generator call is asked: the assistant's instructions (secrets masked), the
    scorecard's rules (id and title), the callers wanted and the behaviour's length limit."""

    instructions: str
    rules: Sequence[Mapping[str, str]]
    asks: Sequence[PersonaAsk]
    max_behavior_chars: int = 1500
    round: int = 1
    notes: Sequence[str] = field(default_factory=tuple)

    def block(self) -> dict[str, Any]:
        """The JSON block the user message carries."""
        return {
            "prompt_version": GENERATOR_PROMPT_VERSION,
            "round": self.round,
            "assistant": {"instructions": self.instructions},
            "rules": [dict(r) for r in self.rules],
            "max_behavior_chars": self.max_behavior_chars,
            "requests": [a.to_json() for a in self.asks],
            "notes": list(self.notes),
        }


def build_messages(request: GenerationRequest) -> list[dict[str, str]]:
    """The chat messages of one generator call."""
    system = _SYSTEM.format(max_chars=request.max_behavior_chars, version=GENERATOR_PROMPT_VERSION)
    block = json.dumps(request.block(), ensure_ascii=False, indent=1)
    user = (
        f"Write {len(request.asks)} persona(s), one per request, for the assistant and "
        f"scorecard below:\n\n```json\n{block}\n```"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def read_personas(content: str) -> list[dict[str, Any]]:
    """The persona entries of an answer (each a mapping, unchecked); :class:`MalformedAnswer`
    when there is no ``personas`` list of objects at all."""
    data = extract_json_object(content)
    items = data.get("personas")
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise MalformedAnswer("the answer has no personas list of objects")
    return [dict(i) for i in items]
