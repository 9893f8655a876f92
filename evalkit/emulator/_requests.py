"""The emulator's own request shapes, where the spec leaves a choice to it, and the event
shapes of the E9 stream: with the spec's bodies (:mod:`evalkit.api._requests`) they are what
the OpenAPI document (:mod:`._openapi`) is generated from.

Each choice narrows a body of the spec and keeps its rules (a subclass): E11 requires
``voiceId`` and refuses blank text; E10 reads the optional brief replacement from ``brief``
(the spec does not show its name). The client knows none of these choices.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..api import (
    Context,
    RefineBody,
    Rule,
    TextToSpeechBody,
    TtsText,
    Variables,
    VoiceId,
)

__all__ = [
    "BuildBrief",
    "DoneEvent",
    "EmulatorRefineBody",
    "EmulatorTextToSpeechBody",
    "ErrorEvent",
    "SynthesisError",
    "TranscriptTurnData",
    "TurnEvent",
]


class BuildBrief(BaseModel):
    """A stored build brief: an optional context (<= 8000) and sample variable records; other
    keys are kept (the spec: fields beyond these two are not shown)."""

    model_config = ConfigDict(extra="allow")

    context: Context | None = None
    sample_rows: list[Variables] | None = Field(None, alias="sampleRows")


class EmulatorRefineBody(RefineBody):
    """E10 as the emulator reads it: ``brief`` replaces the stored brief (the whole of it)."""

    brief: BuildBrief | None = Field(None, description="replaces the stored brief")


class EmulatorTextToSpeechBody(TextToSpeechBody):
    """E11 as the emulator reads it: ``voiceId`` is required, and blank text is refused (the
    spec caps its length; silence is not speech, and a clear error finds an unset template)."""

    text: Annotated[
        TtsText, Rule(must_match=(r"\S", "must contain something to say (not only blanks)"))
    ]
    voice_id: VoiceId = Field(alias="voiceId")


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TurnEvent(_Event):
    """The data of a ``turn`` event: one utterance, in speaking order (1-based)."""

    index: int = Field(ge=1)
    role: Literal["agent", "caller"]
    text: str


class TranscriptTurnData(_Event):
    """One utterance of the transcript in ``done``."""

    speaker: Literal["agent", "caller"]
    text: str


class DoneEvent(_Event):
    """The data of the terminal ``done`` event: the whole transcript."""

    persona_id: str = Field(alias="personaId")
    persona_label: str = Field(alias="personaLabel")
    archetype: Literal["happy"]
    path: str
    turns: list[TranscriptTurnData]


class ErrorEvent(_Event):
    """The data of the terminal ``error`` event."""

    message: str


class SynthesisError(BaseModel):
    """The failure body of E11/E12."""

    message: str
