"""What a client sends: the request bodies of /v1 as pydantic models, and their checks.

The bodies carry the spec's rules (:class:`~._rules.Rule`), and so do the resource models they
hold (an :class:`~._models.AssistantConfig`). :func:`request_errors` validates a JSON body as a
request and names every broken rule; the client calls it (through :func:`check_request`, which
adds the warnings of :mod:`._advice`) before spending a request, and the emulator calls it on
arrival, so both refuse the same bodies with the same messages.

``null`` for an optional field means the field is absent (as the resource models read it, and
as the service's validators treat optional fields): it is accepted and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from . import _limits as L
from ._advice import config_advice
from ._models import WIRE_CONTEXT, AssistantConfig, PhraseReplacement
from ._problems import Problem, problems_from
from ._rules import REQUEST, Rule

__all__ = [
    "Context",
    "CreateAssistantBody",
    "OutputFormat",
    "PersonaBody",
    "PhraseReplacementBody",
    "RefineBody",
    "SessionBody",
    "SimulateBody",
    "TextToSpeechBody",
    "TtsText",
    "UpdateAssistantBody",
    "Variables",
    "VoiceId",
    "check_context",
    "check_request",
    "check_variables",
    "request_errors",
]

Context = Annotated[str, Rule(max_length=L.MAX_CONTEXT_CHARS)]
"""E9's ``context``: what the person picking up knows (at most 8000 characters)."""

Variables = Annotated[
    dict[str, Any],
    Rule(key_max_length=L.MAX_VARIABLE_KEY_CHARS, json_under=L.MAX_VARIABLES_JSON_CHARS),
]
"""E9's ``variables``: keys at most 64 characters, the whole object under 3000 of JSON."""

VoiceId = Annotated[str, Rule(one_of=L.VOICE_IDS)]
OutputFormat = Annotated[str, Rule(one_of=L.OUTPUT_FORMATS)]
TtsText = Annotated[str, Rule(max_length=L.MAX_TTS_TEXT_CHARS)]


class _Body(BaseModel):
    """A request body: camelCase keys, unknown keys accepted (and ignored)."""

    model_config = ConfigDict(extra="allow")


class CreateAssistantBody(_Body):
    """E2: name, optional description and public, and the config."""

    name: Annotated[str, Rule(min_length=1)]
    description: str | None = None
    public: bool | None = Field(None, description="default false")
    config: AssistantConfig


class UpdateAssistantBody(_Body):
    """E3: a partial assistant; what it carries is saved (a new version)."""

    name: Annotated[str, Rule(min_length=1)] | None = None
    description: str | None = None
    public: bool | None = None
    config: AssistantConfig | None = None


class SessionBody(_Body):
    """E6/E7/E8: the participant's display name and an optional room name."""

    participant_name: Annotated[str, Rule(min_length=1)] = Field(alias="participantName")
    room_name: str | None = Field(None, alias="roomName")


class PersonaBody(_Body):
    """Who answers a rehearsed call."""

    label: str | None = None
    behavior: str | None = None
    path: str | None = Field(None, description="default negative")


class SimulateBody(_Body):
    """E9: persona, context and the contact record (variables)."""

    persona: PersonaBody | None = None
    context: Context | None = None
    variables: Variables | None = Field(
        None,
        description=(
            f"keys at most {L.MAX_VARIABLE_KEY_CHARS} characters; whole object under "
            f"{L.MAX_VARIABLES_JSON_CHARS} characters of JSON"
        ),
    )


class RefineBody(_Body):
    """E10: the owner's feedback (the optional brief's name is not shown by the spec)."""

    owner_feedback: Annotated[str, Rule(max_length=L.MAX_OWNER_FEEDBACK_CHARS)] = Field(
        alias="ownerFeedback"
    )


class TextToSpeechBody(_Body):
    """E11: text, voice and format (whether ``voiceId`` is required is not shown)."""

    text: TtsText
    voice_id: VoiceId | None = Field(None, alias="voiceId")
    output_format: OutputFormat | None = Field(None, alias="outputFormat")
    phrase_replacement_config_id: str | None = Field(None, alias="phraseReplacementConfigId")


class PhraseReplacementBody(_Body):
    """E12: at most 1000 phrase replacements."""

    phrase_replacements: Annotated[
        list[PhraseReplacement],
        Rule(max_length=L.MAX_PHRASE_REPLACEMENTS, items=("entry", "entries")),
    ] = Field(alias="phraseReplacements")


_CONTEXT = {REQUEST: True, WIRE_CONTEXT: True}


def request_errors(
    model: type[BaseModel] | TypeAdapter[Any], body: Any, *, at: str = ""
) -> list[Problem]:
    """Every rule ``body`` breaks as a ``model`` request (strictly: ``"5"`` is no number), each
    named by its path (under ``at`` when the body sits inside a larger one)."""
    try:
        if isinstance(model, TypeAdapter):
            model.validate_python(body, strict=True, context=_CONTEXT)
        else:
            model.model_validate(body, strict=True, context=_CONTEXT)
    except ValidationError as exc:
        return problems_from(exc, body, at=at)
    return []


def check_request(model: type[BaseModel], body: Any) -> list[Problem]:
    """The errors of ``body`` as a ``model`` request; when it has none, the warnings about
    the config it carries (a save stores them and a later call trips over them)."""
    errors = request_errors(model, body)
    if errors or not isinstance(body, Mapping) or body.get("config") is None:
        return errors
    return config_advice(body["config"])


_CONTEXT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Context)
_VARIABLES_ADAPTER: TypeAdapter[Any] = TypeAdapter(Variables)


def check_context(context: Any, field: str = "context") -> list[Problem]:
    """A simulate context on its own (grids check theirs before any request); None is none."""
    return [] if context is None else request_errors(_CONTEXT_ADAPTER, context, at=field)


def check_variables(variables: Any, field: str = "variables") -> list[Problem]:
    """A simulate variables object on its own (grids check every record before any request)."""
    return request_errors(_VARIABLES_ADAPTER, variables, at=field)
