"""Request bodies and simulate events of /v1 as pydantic models: one source for the OpenAPI
document (:mod:`._openapi`) and for the server's type checks (:func:`model_problems`).

The resource models live in :mod:`evalkit.api._models`; these add what a client sends and the
event shapes of the E9 stream. Limits come from :mod:`evalkit.api._limits`.

``null`` for an optional field means the field is absent (as the client models read it, and as
the service's validators treat optional fields): it is accepted and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..api import _limits as L
from ..api._models import AssistantConfig, PhraseReplacement
from ..api._validation import Problem

__all__ = [
    "CreateAssistantBody",
    "DoneEvent",
    "ErrorEvent",
    "PersonaBody",
    "PhraseReplacementBody",
    "RefineBody",
    "SessionBody",
    "SimulateBody",
    "SynthesisError",
    "TextToSpeechBody",
    "TranscriptTurnData",
    "TurnEvent",
    "UpdateAssistantBody",
    "model_problems",
]


class _Body(BaseModel):
    """A request body: camelCase keys, unknown keys accepted (and ignored)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class CreateAssistantBody(_Body):
    """E2: name, optional description and public, and the config."""

    name: str = Field(min_length=1)
    description: str | None = None
    public: bool | None = Field(None, description="default false")
    config: AssistantConfig


class UpdateAssistantBody(_Body):
    """E3: a partial assistant; what it carries is saved (a new version)."""

    name: str | None = Field(None, min_length=1)
    description: str | None = None
    public: bool | None = None
    config: AssistantConfig | None = None


class SessionBody(_Body):
    """E6/E7/E8: the participant's display name and an optional room name."""

    participant_name: str = Field(alias="participantName", min_length=1)
    room_name: str | None = Field(None, alias="roomName")


class PersonaBody(_Body):
    """Who answers a rehearsed call."""

    label: str | None = None
    behavior: str | None = None
    path: str | None = Field(None, description="default negative")


class SimulateBody(_Body):
    """E9: persona, context and the contact record (variables)."""

    persona: PersonaBody | None = None
    context: str | None = Field(None, max_length=L.MAX_CONTEXT_CHARS)
    variables: dict[str, Any] | None = Field(
        None,
        description=(
            f"keys at most {L.MAX_VARIABLE_KEY_CHARS} characters; whole object under "
            f"{L.MAX_VARIABLES_JSON_CHARS} characters of JSON"
        ),
        json_schema_extra={"propertyNames": {"maxLength": L.MAX_VARIABLE_KEY_CHARS}},
    )


class RefineBody(_Body):
    """E10: the owner's feedback; ``brief`` is the emulator's name for the optional brief."""

    owner_feedback: str = Field(alias="ownerFeedback", max_length=L.MAX_OWNER_FEEDBACK_CHARS)
    brief: dict[str, Any] | None = Field(
        None, description="replaces the stored brief: {context, sampleRows}"
    )


class TextToSpeechBody(_Body):
    """E11. Blank text is refused: the spec caps its length, and silence is not speech."""

    text: str = Field(max_length=L.MAX_TTS_TEXT_CHARS, pattern=r"\S")
    voice_id: Literal[L.VOICE_IDS] = Field(alias="voiceId")  # type: ignore[valid-type]
    output_format: Literal[L.OUTPUT_FORMATS] | None = Field(  # type: ignore[valid-type]
        None, alias="outputFormat", description="default MP3_22050_32"
    )
    phrase_replacement_config_id: str | None = Field(None, alias="phraseReplacementConfigId")


class PhraseReplacementBody(_Body):
    """E12: at most 1000 phrase replacements."""

    phrase_replacements: list[PhraseReplacement] = Field(
        alias="phraseReplacements", max_length=L.MAX_PHRASE_REPLACEMENTS
    )


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


def _integral(value: Any) -> Any:
    """JSON's one number type: 120.0 is the integer 120 (as JSON Schema reads it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def _field_path(body: Any, loc: tuple[int | str, ...]) -> str:
    """The dotted path of an error location, skipping pydantic's union-member tags."""
    path = ""
    node = body
    for step in loc:
        if isinstance(node, Mapping) and step in node:
            path = f"{path}.{step}" if path else str(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            path = f"{path}[{step}]"
            node = node[step]
    return path or "body"


def model_problems(model: type[BaseModel], body: Any) -> list[Problem]:
    """What ``model`` (strictly, as the OpenAPI document says) finds wrong with ``body``."""
    try:
        model.model_validate(_integral(body), strict=True)
    except ValidationError as exc:
        seen: dict[str, str] = {}
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            path = _field_path(body, loc)
            if err["type"] == "missing" and loc:
                path = f"{path}.{loc[-1]}" if path != "body" else str(loc[-1])
            seen.setdefault(path, str(err["msg"]))
        return [Problem(path, message) for path, message in seen.items()]
    return []


class SynthesisError(BaseModel):
    """The failure body of E11/E12."""

    message: str
