"""Pydantic models of the service's resources.

Rules that keep a config read and written back the same JSON value:

* every model keeps unknown keys (``extra="allow"``), stored and returned unchanged;
* optional fields default to ``None`` and are *not set*: :meth:`ApiModel.to_json` dumps only
  what was read or set, so no default is ever injected into what is sent;
* numbers keep their JSON type (``int | float``), and timestamps stay as the server wrote them.

Defaults are documentation (``Field(description=...)``), never injected. The spec's request
rules (limits, enumerations, non-empty strings, a scorecard's total) are stated here, once, as
:class:`~._rules.Rule` annotations and model validators: they check a body validated as a
request (:func:`~._requests.request_errors`: the client before sending, the emulator on
arrival) and shape the OpenAPI document, but a response is read without them (a new enum
value must not make an assistant unreadable).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .._util import redact
from . import _limits as L
from ._rules import Integer, Rule, in_request, number_text, rule_violations

Number = int | float
NonEmpty = Annotated[str, Rule(min_length=1)]
_ONLY_DEFAULT: Final = Rule(unsupported="is not supported; `default` is the only key")


WIRE_CONTEXT = "evalkit.wire"
_WIRE = WIRE_CONTEXT
_HIDE = "\x00evalkit-python-name:"


def _python_only_names(cls: type[BaseModel]) -> frozenset[str]:
    """Field names whose Python spelling differs from their wire alias."""
    return frozenset(
        name for name, f in cls.model_fields.items() if f.alias is not None and f.alias != name
    )


class ApiModel(BaseModel):
    """Base of every resource model: camelCase on the wire, unknown keys kept."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
    )

    _key_order: tuple[str, ...] | None = PrivateAttr(default=None)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate wire JSON: keys match camelCase aliases only (see :meth:`_remember_key_order`)."""
        kwargs["context"] = {**(kwargs.get("context") or {}), _WIRE: True}
        return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Validate wire JSON text (camelCase aliases only)."""
        kwargs["context"] = {**(kwargs.get("context") or {}), _WIRE: True}
        return super().model_validate_json(json_data, **kwargs)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(
        cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        """Keep the input's key order; on the wire, a snake_case key is an unknown key.

        Python code may construct models by field name (``initial_greeting=True``), but JSON
        read from the service or a file matches aliases only: a key spelled like a field's
        Python name stays an unknown key, returned unchanged.
        """
        hidden: dict[str, str] = {}
        if isinstance(data, dict) and info.context and info.context.get(_WIRE):
            python_names = _python_only_names(cls)
            if python_names.intersection(data):
                hidden = {_HIDE + k: k for k in data if k in python_names}
                data = {(_HIDE + k if k in python_names else k): v for k, v in data.items()}
        obj = handler(data)
        if isinstance(data, dict) and isinstance(obj, ApiModel):
            if hidden and obj.__pydantic_extra__ is not None:
                obj.__pydantic_extra__ = {
                    hidden.get(k, k): v for k, v in obj.__pydantic_extra__.items()
                }
            obj._key_order = tuple(str(hidden.get(k, k)) for k in data)
        return obj

    @model_serializer(mode="wrap")
    def _keep_key_order(self, handler: SerializerFunctionWrapHandler) -> Any:
        out = handler(self)
        order = self._key_order
        if order and isinstance(out, dict):
            pos = {k: i for i, k in enumerate(order)}
            out = dict(sorted(out.items(), key=lambda kv: pos.get(kv[0], len(pos))))
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON value to send: only what was read or set, camelCase keys, extras kept."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, _redact_for_repr(name, value)


def _redact_for_repr(name: str | None, value: Any) -> Any:
    """Mask credential values (``apiKey``, header ``Authorization``, ...) and project keys."""
    return redact(value, key=name) if isinstance(value, str | dict | list | tuple) else value


# --------------------------------------------------------------------------- scorecard


class ScorecardRule(ApiModel):
    """A scorecard rule. Fields beyond ruleId, title and points are not shown by the spec
    (evalkit keeps its own ``check`` here)."""

    rule_id: NonEmpty
    title: str
    points: Annotated[Number, Rule(ge=0)]


class Scorecard(ApiModel):
    """Rules whose points total exactly 100, with unique rule ids."""

    rubric_version_id: NonEmpty
    rules: Annotated[list[ScorecardRule], Rule(min_length=1, items=("rule", "rules"))]

    @model_validator(mode="after")
    def _ids_and_total(self, info: ValidationInfo) -> Self:
        if not in_request(info):
            return self
        found: list[tuple[tuple[int | str, ...], str]] = []
        first: dict[str, int] = {}
        for i, rule in enumerate(self.rules):
            j = first.setdefault(rule.rule_id, i)
            if j != i:
                found.append(
                    (("rules", i, "ruleId"), f"duplicates rules[{j}].ruleId {rule.rule_id!r}")
                )
        total = round(sum(rule.points for rule in self.rules), 9)
        if self.rules and total != L.SCORECARD_TOTAL_POINTS:
            message = (
                f"points must total exactly {L.SCORECARD_TOTAL_POINTS}, got {number_text(total)}"
            )
            found.append((("rules",), message))
        if found:
            raise rule_violations(type(self).__name__, found, self.rules)
        return self


class Grading(ApiModel):
    """``config.grading``: the assistant-level scorecard."""

    scorecard: Scorecard | None = None


# --------------------------------------------------------------------------- agent and tools


class ToolParameters(ApiModel):
    """JSON Schema of a tool's arguments."""

    type: str
    properties: dict[str, Any]
    required: list[str] | None = None


class ToolExecution(ApiModel):
    """Where a tool runs; ``connection_id`` is required for ``tool_endpoint`` (the spec: not
    checked on create, so a missing one is a warning, see :mod:`._advice`)."""

    type: Annotated[str, Rule(one_of=L.TOOL_EXECUTION_TYPES)]
    connection_id: str | None = None


class AssistantTool(ApiModel):
    """A tool the model can call; a client tool when ``execution`` is omitted."""

    name: NonEmpty
    description: NonEmpty
    parameters: ToolParameters
    timeout: Annotated[Number, Rule(ge=0)] | None = Field(None, description="seconds; default 10")
    execution: ToolExecution | None = None


class AgentConfig(ApiModel):
    """The system prompt and how the agent opens."""

    instructions: NonEmpty
    initial_greeting: bool | None = Field(None, description="default false: the agent waits")
    greeting_instructions: str | None = Field(None, description="ignored unless initial_greeting")
    tools: list[AssistantTool] | None = None


# --------------------------------------------------------------------------- audio and session


class NoiseCancellation(ApiModel):
    """Caller-audio cleaning; ``model`` in nc_vf_s (default), nc_vf_l, nc_l; ``level`` default 0.1."""

    enabled: bool
    model: Annotated[str, Rule(one_of=L.NOISE_CANCELLATION_MODELS)] | None = None
    level: Number | None = None


class BackgroundNoise(ApiModel):
    """Ambient room sound under the call."""

    enabled: bool


class SessionConfig(ApiModel):
    """Web-session settings: ``ttl`` default 600 s (>= 1), ``room_prefix`` <= 32 characters."""

    ttl: Annotated[Integer, Rule(ge=L.MIN_SESSION_TTL_S)] | None = None
    room_prefix: Annotated[str, Rule(max_length=L.MAX_ROOM_PREFIX_CHARS)] | None = None


# --------------------------------------------------------------------------- providers


class _ProviderConfig(ApiModel):
    provider: str
    api_key: str | None = Field(
        None, description="optional customer key; billed through the service when omitted"
    )


class VendorASttConfig(_ProviderConfig):
    """vendor_a STT: model stt-rt-v4 (default) or stt-rt-v5; language default `ur`; context."""

    provider: Literal["vendor_a"]
    model: str | None = None
    language: str | None = None
    context: str | None = None


class VendorBSttConfig(_ProviderConfig):
    """vendor_b STT: model nv-3 (default) or nv-2; language default `multi`."""

    provider: Literal["vendor_b"]
    model: str | None = None
    language: str | None = None


class VendorCSttConfig(_ProviderConfig):
    """vendor_c STT: model default asr-1; language default `ur`; prompt; useRealtime default false."""

    provider: Literal["vendor_c"]
    model: str | None = None
    language: str | None = None
    prompt: str | None = None
    use_realtime: bool | None = None


class VendorDSttConfig(_ProviderConfig):
    """vendor_d STT: model asr-large-v3-turbo (default), asr-large-v3, distil-asr-large-v3-en."""

    provider: Literal["vendor_d"]
    model: str | None = None
    language: str | None = None
    prompt: str | None = None


class ServiceAiSttConfig(ApiModel):
    """serviceai STT: model large-v3; language default `ur`; no apiKey."""

    provider: Literal["serviceai"]
    model: str | None = None
    language: str | None = None


class OtherProviderConfig(_ProviderConfig):
    """A provider this version of evalkit does not know; kept as read."""


class ServiceAiTtsConfig(ApiModel):
    """serviceai TTS: voiceId from the gallery (required); outputFormat default MP3_22050_32."""

    provider: Literal["serviceai"]
    voice_id: str | None = None
    output_format: str | None = None


class VendorCTtsConfig(_ProviderConfig):
    """vendor_c TTS: model default llm-4o-mini-tts; voiceId default `alloy`."""

    provider: Literal["vendor_c"]
    model: str | None = None
    voice_id: str | None = None


class VendorATtsConfig(_ProviderConfig):
    """vendor_a TTS: voiceId required; model default tts-rt-v1; language default `ur`."""

    provider: Literal["vendor_a"]
    voice_id: str | None = None
    model: str | None = None
    language: str | None = None


class LlmConfig(_ProviderConfig):
    """An LLM block: provider and model required; knobs a provider does not take are ignored.

    vendor_f: thinkingLevel (3.x), thinkingBudget -1..24576 (2.5, not lite); vendor_c:
    reasoningEffort and verbosity (5.x); vendor_e: reasoningEffort low/medium/high.
    """

    model: NonEmpty
    thinking_level: str | None = None
    thinking_budget: (
        Annotated[Integer, Rule(ge=L.THINKING_BUDGET_RANGE[0], le=L.THINKING_BUDGET_RANGE[1])]
        | None
    ) = None
    reasoning_effort: str | None = None
    verbosity: str | None = None


def _tag(known: tuple[str, ...]) -> Any:
    def tag(value: Any) -> str:
        provider = (
            value.get("provider") if isinstance(value, dict) else getattr(value, "provider", None)
        )
        return provider if provider in known else "other"

    return Discriminator(tag)


SttConfig = Annotated[
    Annotated[VendorASttConfig, Tag("vendor_a")]
    | Annotated[VendorBSttConfig, Tag("vendor_b")]
    | Annotated[VendorCSttConfig, Tag("vendor_c")]
    | Annotated[VendorDSttConfig, Tag("vendor_d")]
    | Annotated[ServiceAiSttConfig, Tag("serviceai")]
    | Annotated[OtherProviderConfig, Tag("other")],
    _tag(tuple(L.STT_MODELS)),
]
TtsConfig = Annotated[
    Annotated[ServiceAiTtsConfig, Tag("serviceai")]
    | Annotated[VendorCTtsConfig, Tag("vendor_c")]
    | Annotated[VendorATtsConfig, Tag("vendor_a")]
    | Annotated[OtherProviderConfig, Tag("other")],
    _tag(L.TTS_PROVIDERS),
]


class SttBlock(ApiModel):
    """``config.stt``: ``default`` is the only supported key."""

    __pydantic_extra__: dict[str, Annotated[Any, _ONLY_DEFAULT]] = Field(init=False)
    default: SttConfig


class TtsBlock(ApiModel):
    """``config.tts``: ``default`` is the only supported key."""

    __pydantic_extra__: dict[str, Annotated[Any, _ONLY_DEFAULT]] = Field(init=False)
    default: TtsConfig


class LlmBlock(ApiModel):
    """``config.llm``: ``default`` is the only supported key."""

    __pydantic_extra__: dict[str, Annotated[Any, _ONLY_DEFAULT]] = Field(init=False)
    default: LlmConfig


class AssistantConfig(ApiModel):
    """An assistant's whole configuration. Unknown keys are stored and returned unchanged."""

    agent: AgentConfig
    grading: Grading | None = None
    noise_cancellation: NoiseCancellation | None = None
    background_noise: BackgroundNoise | None = None
    session: SessionConfig | None = None
    stt: SttBlock | None = None
    tts: TtsBlock | None = None
    llm: LlmBlock | None = None


# --------------------------------------------------------------------------- assistants


class AssistantAlias(ApiModel):
    """Which version an alias points to, and who moved it last."""

    version: Annotated[int, Rule(ge=1)]
    updated_at: str | None = None
    updated_by: str | None = None


class AssistantAliases(ApiModel):
    """``draft`` always; ``prod`` only once published."""

    draft: AssistantAlias
    prod: AssistantAlias | None = None

    @property
    def draft_ahead(self) -> bool:
        """True when the draft holds edits that calls do not run yet."""
        return self.prod is not None and self.draft.version > self.prod.version


class Assistant(ApiModel):
    """A realtime assistant as the service returns it (timestamps kept as the server wrote them)."""

    realtime_assistant_id: str
    organization_id: str | None = None
    project_id: str | None = None
    name: str
    description: str | None = None
    config: AssistantConfig
    public: bool | None = None
    created_at: str | None = None
    updated_at: str | None = None
    created_by: str | None = None
    updated_by: str | None = None
    version: int | None = None
    aliases: AssistantAliases | None = None

    @property
    def id(self) -> str:
        """Shorthand for ``realtime_assistant_id``."""
        return self.realtime_assistant_id


class AssistantMetadata(ApiModel):
    """E5: publish state, without config."""

    realtime_assistant_id: str
    name: str | None = None
    description: str | None = None
    aliases: AssistantAliases


# --------------------------------------------------------------------------- other resources


class SessionCredentials(ApiModel):
    """Join credentials for a real-time room."""

    token: str
    ws_url: str
    room_name: str

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, ("…" if name == "token" else value)


class PhraseReplacement(ApiModel):
    """One phrase and what to say instead (either script direction)."""

    phrase: NonEmpty
    replacement: str


class PhraseReplacementConfig(ApiModel):
    """E12's answer: the config id and the stored replacements."""

    config_id: str
    phrase_replacements: list[PhraseReplacement]


class ExcludedCounts(ApiModel):
    """Contacts an import dropped, by reason."""

    invalid_phone: int | None = None
    missing_name: int | None = None
    duplicate: int | None = None
    dnc: int | None = None
    recently_called: int | None = None


class ImportErrorRow(ApiModel):
    """One row an import rejected."""

    row: int
    issue: str
    value: str | None = None


class ContactListSummary(ApiModel):
    """What an import kept and dropped, recorded at creation."""

    will_be_called: int
    excluded: ExcludedCounts | None = None
    errors: list[ImportErrorRow] | None = None


class ContactList(ApiModel):
    """E13: a contact list's metadata (not campaign progress)."""

    list_id: str
    organization_id: str | None = None
    project_id: str | None = None
    name: str
    source_kind: str
    summary: ContactListSummary
    contact_count: int
    created_at: str | None = None
    updated_at: str | None = None
    version: int | None = None


class RefineResponse(ApiModel):
    """E10's answer: the build started (200 says nothing of its outcome)."""

    build_id: str
    assistant_id: str
    status: str


class ErrorEnvelope(ApiModel):
    """The error body: ``message`` a string or an array; ``error`` absent on some responses."""

    message: str | list[str] | None = None
    error: str | None = None
    status_code: int | None = None

    @property
    def messages(self) -> list[str]:
        """``message`` as a list, whatever its shape."""
        if self.message is None:
            return []
        return [self.message] if isinstance(self.message, str) else [str(m) for m in self.message]
