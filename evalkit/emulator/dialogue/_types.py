"""The engine's vocabulary: a call's setup, a spoken turn, and the backend protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["ConversationSetup", "DialogueBackend", "Register", "Role", "Utterance"]

Role = Literal["agent", "caller"]
Register = Literal["en", "ru", "ur"]


@dataclass(frozen=True, slots=True)
class ConversationSetup:
    """Everything a backend needs to play one rehearsed call."""

    config: Mapping[str, Any]
    """The assistant's AssistantConfig JSON (camelCase keys) as saved now."""
    persona: Mapping[str, Any]
    """``{"label", "behavior", "path"}`` as sent; any may be missing."""
    context: str | None
    """What the person picking up knows; None means a genuine cold call."""
    variables: Mapping[str, Any] | None
    """The contact record; both sides see it."""
    seed: int
    """Per-conversation seed (the app derives it)."""


@dataclass(frozen=True, slots=True)
class Utterance:
    """One spoken turn; ``acts`` are what it does (see :data:`ACTS`), not part of equality."""

    role: Role
    text: str
    acts: frozenset[str] = field(default=frozenset(), compare=False)


class DialogueBackend(Protocol):
    """Plays both sides of a rehearsed call."""

    def conversation(self, setup: ConversationSetup) -> AsyncIterator[Utterance]:
        """Yield the utterances in speaking order; stopping early abandons the call."""
        ...
