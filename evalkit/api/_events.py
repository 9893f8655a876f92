"""Typed events of the simulate stream (E9) and the transcript they add up to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["agent", "caller"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance (`turn` event): 1-based speaking order, speaker role, text."""

    index: int
    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    """One entry of the `done` event's `turns` array."""

    speaker: Role
    text: str


@dataclass(frozen=True, slots=True)
class Done:
    """The terminal `done` event: the whole transcript and the persona's identity."""

    persona_id: str
    persona_label: str
    archetype: str
    path: str
    turns: tuple[TranscriptTurn, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class SimulationFailed:
    """The terminal `error` event: the conversation broke or hit the five-minute ceiling."""

    message: str


SimulationEvent: TypeAlias = Turn | Done | SimulationFailed
TerminalEvent: TypeAlias = Done | SimulationFailed


@dataclass(frozen=True, slots=True)
class Transcript:
    """A whole simulated conversation, collected from its stream.

    ``outcome`` is the terminal event. ``turns`` are the streamed turns (for a `done` stream
    they match ``outcome.turns``). Timings are seconds from the request being sent (monotonic
    clock); ``turn_at_s[i]`` is when ``turns[i]`` arrived.
    """

    turns: tuple[Turn, ...]
    outcome: TerminalEvent
    first_turn_s: float | None
    duration_s: float
    turn_at_s: tuple[float, ...] = field(default=(), compare=False)

    @property
    def ok(self) -> bool:
        """True when the stream ended with `done`."""
        return isinstance(self.outcome, Done)

    @property
    def ended_by(self) -> Role | None:
        """Who spoke last (the spec: either side may end the call)."""
        return self.turns[-1].role if self.turns else None


def parse_event(name: str, data: Mapping[str, Any]) -> SimulationEvent | None:
    """Build a typed event from an SSE event name and its JSON data; None if unknown.

    Raises ``KeyError``/``TypeError``/``ValueError`` when a known event lacks its fields.
    """
    if name == "turn":
        role = data["role"]
        if role not in ("agent", "caller"):
            raise ValueError(f"unknown role {role!r}")
        return Turn(int(data["index"]), role, str(data["text"]))
    if name == "done":
        turns = tuple(TranscriptTurn(t["speaker"], str(t["text"])) for t in data.get("turns") or ())
        known = {"personaId", "personaLabel", "archetype", "path", "turns"}
        return Done(
            persona_id=str(data.get("personaId", "")),
            persona_label=str(data.get("personaLabel", "")),
            archetype=str(data.get("archetype", "")),
            path=str(data.get("path", "")),
            turns=turns,
            extra={k: v for k, v in data.items() if k not in known},
        )
    if name == "error":
        return SimulationFailed(str(data.get("message", "")))
    return None
