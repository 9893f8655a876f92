"""The OpenAPI 3.1 document of /v1, generated: served at ``/v1/openapi.json``.

Schemas come from the pydantic models (resources from :mod:`evalkit.api._models`, request
bodies from :mod:`evalkit.api._requests` and, where the emulator chose what the spec leaves
open, from :mod:`._requests`, with the stream's events). The spec's limits are the models' own
rules (:class:`evalkit.api._rules.Rule`, values from :mod:`evalkit.api._limits`), the same
ones the server and the client check; only those the server refuses with 400 are rules (a
provider-side mistake is stored on save, so it is not a constraint of the document). Paths
and status codes come from :data:`OPERATIONS`.

The E9 stream is described under its ``text/event-stream`` response the way OpenAPI 3.2
(``itemSchema``) and schemathesis read a 3.1 ``schema`` there: each event is an object
``{event, data}``, one ``oneOf`` branch per event name (``turn``, ``done``, ``error``), whose
``data`` is JSON text (``contentMediaType``) with the event's ``contentSchema``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..api import (
    RATE_LIMIT_MESSAGE,
    STT_MODELS,
    TTS_PROVIDERS,
    Assistant,
    AssistantMetadata,
    ContactList,
    CreateAssistantBody,
    ErrorEnvelope,
    PhraseReplacementBody,
    PhraseReplacementConfig,
    RefineResponse,
    SessionBody,
    SessionCredentials,
    SimulateBody,
    UpdateAssistantBody,
)
from . import _requests as R

__all__ = ["OPERATIONS", "Operation", "openapi_document"]

_S = dict[str, Any]
_REF = "#/components/schemas/{model}"

PROVIDER_UNIONS: dict[str, tuple[str, ...]] = {
    "SttBlock": tuple(STT_MODELS),
    "TtsBlock": TTS_PROVIDERS,
}
"""Blocks whose ``default`` is a union by provider: the catch-all member excludes the others."""

_MODELS: tuple[type[BaseModel], ...] = (
    Assistant,
    AssistantMetadata,
    SessionCredentials,
    PhraseReplacementConfig,
    ContactList,
    RefineResponse,
    ErrorEnvelope,
    R.SynthesisError,
    CreateAssistantBody,
    UpdateAssistantBody,
    SessionBody,
    SimulateBody,
    R.EmulatorRefineBody,
    R.EmulatorTextToSpeechBody,
    PhraseReplacementBody,
    R.TurnEvent,
    R.DoneEvent,
    R.ErrorEvent,
)

AUDIO_MEDIA_TYPES = ("audio/mpeg", "audio/wav", "audio/ogg", "audio/L16;rate=22050", "audio/basic")


@dataclass(frozen=True, slots=True)
class Operation:
    """One /v1 operation: where, what it takes and what it answers (status -> schema name)."""

    path: str
    method: str
    operation_id: str
    summary: str
    responses: tuple[tuple[str, str | None, str], ...]
    body: str | None = None
    public: bool = False


_AUTH = (("401", "ErrorEnvelope", "invalid authorization"), ("403", "ErrorEnvelope", "Forbidden"))
_BAD = (("400", "ErrorEnvelope", "validation: one message per failed field"),)
_MISSING = (("404", "ErrorEnvelope", "Realtime assistant not found: <id>"),)
_NOT_PUBLIC = (("403", "ErrorEnvelope", "Assistant is not available publicly"),)
_SYNTH = (
    ("400", "SynthesisError", "validation"),
    ("401", "ErrorEnvelope", "invalid authorization"),
    ("429", "SynthesisError", RATE_LIMIT_MESSAGE),
)
_RA = "/realtime-assistants"
_ID = "/{realtimeAssistantId}"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        _RA, "get", "listAssistants", "E1. List assistants",
        (("200", "AssistantList", "drafts with aliases"), *_AUTH),
    ),
    Operation(
        _RA, "post", "createAssistant", "E2. Create assistant",
        (("201", "Assistant", "created"), *_BAD, *_AUTH), body="CreateAssistantBody",
    ),
    Operation(
        _RA + _ID, "post", "updateAssistant", "E3. Update assistant",
        (("200", "Assistant", "saved"), *_BAD, *_AUTH, *_MISSING), body="UpdateAssistantBody",
    ),
    Operation(
        _RA + _ID, "delete", "deleteAssistant", "E4. Delete assistant",
        (("204", None, "deleted"), *_AUTH, *_MISSING),
    ),
    Operation(
        _RA + _ID + "/metadata", "get", "getAssistantMetadata", "E5. Get publish state",
        (("200", "AssistantMetadata", "publish state"), *_AUTH, *_MISSING),
    ),
    Operation(
        _RA + _ID + "/createSession", "post", "createSession", "E6. Create session",
        (("200", "SessionCredentials", "credentials"), *_BAD, *_AUTH, *_MISSING),
        body="SessionBody",
    ),
    Operation(
        _RA + _ID + "/createPublicSession", "post", "createPublicSession",
        "E7. Create public session",
        (("200", "SessionCredentials", "credentials"), *_BAD, *_NOT_PUBLIC, *_MISSING),
        body="SessionBody", public=True,
    ),
    Operation(
        _RA + _ID + "/public-session", "post", "openPublicSession",
        "E8. Open a session without an API key",
        (
            ("200", "SessionCredentials", "credentials"),
            *_BAD,
            ("402", "ErrorEnvelope", "Insufficient credits to start a realtime session"),
            *_NOT_PUBLIC,
            *_MISSING,
            ("503", "ErrorEnvelope", "Published version <n> of assistant <id> is not readable"),
        ),
        body="SessionBody", public=True,
    ),
    Operation(
        _RA + "/builds" + _ID + "/simulate", "post", "simulate", "E9. Rehearse a call",
        (
            ("200", "EventStream", "event stream: turn*, then done or error"),
            *_BAD,
            *_AUTH,
            *_MISSING,
            ("429", "ErrorEnvelope", "injected fault (Retry-After)"),
            ("503", "ErrorEnvelope", "injected fault"),
        ),
        body="SimulateBody",
    ),
    Operation(
        _RA + "/builds" + _ID + "/refine", "post", "refine",
        "E10. Refine a built assistant's prompt",
        (
            ("200", "RefineResponse", "build started"),
            *_BAD,
            *_AUTH,
            ("404", "ErrorEnvelope", "Assistant has no build artifacts to refine"),
        ),
        body="EmulatorRefineBody",
    ),
    Operation(
        "/synthesis/text-to-speech", "post", "textToSpeech", "E11. Text to speech",
        (
            ("200", "Audio", "audio bytes"),
            *_SYNTH,
            ("404", "SynthesisError", "unknown phrase replacement config"),
        ),
        body="EmulatorTextToSpeechBody",
    ),
    Operation(
        "/synthesis/phrase-replacement-config", "post", "createPhraseReplacementConfig",
        "E12. Create phrase replacement config",
        (("201", "PhraseReplacementConfig", "stored"), *_SYNTH), body="PhraseReplacementBody",
    ),
    Operation(
        "/contact-lists/{listId}", "get", "getContactList", "E13. Get a contact list's metadata",
        (
            ("200", "ContactList", "metadata"),
            *_AUTH,
            ("404", "ErrorEnvelope", "Contact list not found: <id>"),
        ),
    ),
)  # fmt: skip
"""The thirteen operations as the spec shows them (status codes it leaves "not shown" are
the emulator's: E2 and E12 answer 201, E3 the saved assistant)."""


def _clean(node: Any) -> Any:
    """Drop pydantic's generated titles and ``default: null`` (nothing is injected)."""
    if isinstance(node, dict):
        return {
            k: _clean(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str)) and not (k == "default" and v is None)
        }
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node


def _exclusive_unions(schemas: _S) -> None:
    """Make ``oneOf`` by provider exclusive: the catch-all takes only unknown providers."""
    for block, known in PROVIDER_UNIONS.items():
        default = schemas[block]["properties"]["default"]
        members = []
        for member in default.pop("oneOf"):
            if member.get("$ref", "").endswith("/OtherProviderConfig"):
                other = {"properties": {"provider": {"not": {"enum": list(known)}}}}
                member = {"allOf": [member, other]}
            members.append(member)
        default["oneOf"] = members


def _extras() -> _S:
    return {
        "AssistantList": {"type": "array", "items": {"$ref": _REF.format(model="Assistant")}},
        "Audio": {"type": "string", "format": "binary"},
        "EventStream": {
            "description": "one server-sent event: turn*, then exactly one done or error",
            "oneOf": [_event_schema(name) for name in _EVENT_NAMES],
        },
    }


def _event_schema(name: str) -> _S:
    data = {
        "type": "string",
        "contentMediaType": "application/json",
        "contentSchema": {"$ref": _REF.format(model=f"{name.title()}Event")},
    }
    return {
        "type": "object",
        "required": ["event", "data"],
        "properties": {"event": {"const": name}, "data": data},
    }


@lru_cache(maxsize=1)
def _components() -> _S:
    _, generated = models_json_schema([(m, "validation") for m in _MODELS], ref_template=_REF)
    schemas: _S = _clean(generated["$defs"])
    _exclusive_unions(schemas)
    schemas.update(_extras())
    return schemas


def _content(schema: str) -> _S:
    ref = {"$ref": _REF.format(model=schema)}
    if schema == "Audio":
        return {t: {"schema": ref} for t in AUDIO_MEDIA_TYPES}
    if schema == "EventStream":
        return {"text/event-stream": {"schema": ref}}
    return {"application/json": {"schema": ref}}


_EVENT_NAMES = ("turn", "done", "error")
_PARAMS = {
    "realtimeAssistantId": {"type": "string"},
    "listId": {"type": "string"},
}


def _operation(op: Operation) -> _S:
    out: _S = {"operationId": op.operation_id, "summary": op.summary, "responses": {}}
    params = [p for p in _PARAMS if "{" + p + "}" in op.path]
    if params:
        out["parameters"] = [
            {"name": p, "in": "path", "required": True, "schema": _PARAMS[p]} for p in params
        ]
    if op.body is not None:
        out["requestBody"] = {"required": True, "content": _content(op.body)}
    for status, schema, description in op.responses:
        response: _S = {"description": description}
        if schema is not None:
            response["content"] = _content(schema)
        out["responses"][status] = response
    if op.public:
        out["security"] = []
    return out


def openapi_document(server_url: str = "http://127.0.0.1:8787/v1") -> dict[str, Any]:
    """The OpenAPI 3.1 document of /v1 with ``server_url`` as its server (a fresh copy)."""
    paths: _S = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Voice assistant service (evalkit emulator)",
            "version": "1.0",
            "description": "Generated from evalkit's models and limits; the emulator serves it.",
        },
        "servers": [{"url": server_url}],
        "security": [{"bearerAuth": []}],
        "paths": paths,
        "components": {
            "schemas": copy.deepcopy(_components()),
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
    }
