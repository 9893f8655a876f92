"""A hand-written OpenAPI 3.1 document of /v1, served at ``/v1/openapi.json``.

It describes the thirteen operations as the spec shows them (fields the spec leaves "not
shown" are described as the emulator implements them), and the fuzz test generates requests
from its request-body schemas.
"""

from __future__ import annotations

import copy
from typing import Any

from ..api import _limits as L

_S = dict[str, Any]


def _ref(name: str) -> _S:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: _S) -> _S:
    return {"content": {"application/json": {"schema": schema}}}


def _error(description: str) -> _S:
    return {"description": description, **_json(_ref("ErrorEnvelope"))}


def _synthesis_error(description: str) -> _S:
    return {"description": description, **_json(_ref("SynthesisError"))}


_ID_PARAM: _S = {
    "name": "realtimeAssistantId",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "format": "uuid"},
}

_PROVIDER_BLOCK = {
    "stt": tuple(L.STT_MODELS),
    "tts": L.TTS_PROVIDERS,
    "llm": tuple(L.LLM_MODELS),
}


def _schemas() -> _S:
    alias: _S = {
        "type": "object",
        "required": ["version"],
        "properties": {
            "version": {"type": "integer", "minimum": 1},
            "updatedAt": {"type": "string", "format": "date-time"},
            "updatedBy": {"type": "string"},
        },
    }
    tool: _S = {
        "type": "object",
        "required": ["name", "description", "parameters"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "description": {"type": "string", "minLength": 1},
            "parameters": {
                "type": "object",
                "required": ["type", "properties"],
                "properties": {
                    "type": {"type": "string"},
                    "properties": {"type": "object"},
                    "required": {"type": "array", "items": {"type": "string"}},
                },
            },
            "timeout": {"type": "number", "minimum": 0},
            "execution": {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"enum": list(L.TOOL_EXECUTION_TYPES)},
                    "connectionId": {"type": "string"},
                },
            },
        },
    }
    config: _S = {
        "type": "object",
        "description": "Keys beyond those listed are stored and returned unchanged.",
        "required": ["agent"],
        "properties": {
            "agent": {
                "type": "object",
                "required": ["instructions"],
                "properties": {
                    "instructions": {"type": "string", "minLength": 1},
                    "initialGreeting": {"type": "boolean"},
                    "greetingInstructions": {"type": "string"},
                    "tools": {"type": "array", "items": tool, "maxItems": 3},
                },
            },
            "grading": {"type": "object", "properties": {"scorecard": _ref("Scorecard")}},
            "noiseCancellation": {
                "type": "object",
                "required": ["enabled"],
                "properties": {
                    "enabled": {"type": "boolean"},
                    "model": {"enum": list(L.NOISE_CANCELLATION_MODELS)},
                    "level": {"type": "number", "minimum": 0},
                },
            },
            "backgroundNoise": {
                "type": "object",
                "required": ["enabled"],
                "properties": {"enabled": {"type": "boolean"}},
            },
            "session": {
                "type": "object",
                "properties": {
                    "ttl": {"type": "integer", "minimum": L.MIN_SESSION_TTL_S, "default": 600},
                    "roomPrefix": {"type": "string", "maxLength": L.MAX_ROOM_PREFIX_CHARS},
                },
            },
            **{
                block: {
                    "type": "object",
                    "required": ["default"],
                    "additionalProperties": False,
                    "properties": {
                        "default": {
                            "type": "object",
                            "required": ["provider", "model"] if block == "llm" else ["provider"],
                            "properties": {
                                "provider": {"enum": list(providers)},
                                "model": {"type": "string"},
                                "apiKey": {"type": "string"},
                            },
                        }
                    },
                }
                for block, providers in _PROVIDER_BLOCK.items()
            },
        },
    }
    assistant_props: _S = {
        "realtimeAssistantId": {"type": "string", "format": "uuid"},
        "organizationId": {"type": "string", "format": "uuid"},
        "projectId": {"type": "string", "format": "uuid"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "config": _ref("AssistantConfig"),
        "public": {"type": "boolean"},
        "createdAt": {"type": "string", "format": "date-time"},
        "updatedAt": {"type": "string", "format": "date-time"},
        "createdBy": {"type": "string"},
        "updatedBy": {"type": "string"},
    }
    created: _S = {
        "type": "object",
        "required": ["realtimeAssistantId", "name", "config"],
        "properties": assistant_props,
    }
    listed = copy.deepcopy(created)
    listed["properties"]["version"] = {"type": "integer", "minimum": 1}
    listed["properties"]["aliases"] = _ref("AssistantAliases")
    session_body: _S = {
        "type": "object",
        "required": ["participantName"],
        "properties": {
            "participantName": {"type": "string", "minLength": 1},
            "roomName": {"type": "string"},
        },
    }
    return {
        "ErrorEnvelope": {
            "type": "object",
            "required": ["message", "statusCode"],
            "properties": {
                "message": {
                    "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
                },
                "error": {"type": "string"},
                "statusCode": {"type": "integer"},
            },
        },
        "SynthesisError": {
            "type": "object",
            "required": ["message"],
            "properties": {"message": {"type": "string"}},
        },
        "Scorecard": {
            "type": "object",
            "required": ["rubricVersionId", "rules"],
            "properties": {
                "rubricVersionId": {"type": "string", "minLength": 1},
                "rules": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 4,
                    "items": {
                        "type": "object",
                        "required": ["ruleId", "title", "points"],
                        "properties": {
                            "ruleId": {"type": "string", "minLength": 1},
                            "title": {"type": "string"},
                            "points": {"type": "number", "minimum": 0},
                        },
                    },
                },
            },
        },
        "AssistantConfig": config,
        "AssistantAlias": alias,
        "AssistantAliases": {
            "type": "object",
            "required": ["draft"],
            "properties": {"draft": _ref("AssistantAlias"), "prod": _ref("AssistantAlias")},
        },
        "Assistant": created,
        "AssistantListItem": listed,
        "AssistantMetadata": {
            "type": "object",
            "required": ["realtimeAssistantId", "aliases"],
            "properties": {
                "realtimeAssistantId": {"type": "string", "format": "uuid"},
                "name": {"type": "string"},
                "description": {"type": "string"},
                "aliases": _ref("AssistantAliases"),
            },
        },
        "CreateAssistantBody": {
            "type": "object",
            "required": ["name", "config"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "description": {"type": "string"},
                "public": {"type": "boolean", "default": False},
                "config": _ref("AssistantConfig"),
            },
        },
        "UpdateAssistantBody": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "description": {"type": "string"},
                "public": {"type": "boolean"},
                "config": _ref("AssistantConfig"),
            },
        },
        "SessionBody": session_body,
        "SessionCredentials": {
            "type": "object",
            "required": ["token", "wsUrl", "roomName"],
            "properties": {
                "token": {"type": "string", "description": "HS256 JWT, LiveKit claim layout"},
                "wsUrl": {"type": "string"},
                "roomName": {"type": "string"},
            },
        },
        "SimulateBody": {
            "type": "object",
            "properties": {
                "persona": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "behavior": {"type": "string"},
                        "path": {"type": "string", "default": "negative"},
                    },
                },
                "context": {"type": "string", "maxLength": L.MAX_CONTEXT_CHARS},
                "variables": {
                    "type": "object",
                    "propertyNames": {"maxLength": L.MAX_VARIABLE_KEY_CHARS},
                    "description": "whole object under 3000 characters of JSON",
                },
            },
        },
        "RefineBody": {
            "type": "object",
            "required": ["ownerFeedback"],
            "properties": {
                "ownerFeedback": {"type": "string", "maxLength": L.MAX_OWNER_FEEDBACK_CHARS},
                "brief": {
                    "type": "object",
                    "description": "emulator name of the optional brief replacement",
                    "properties": {
                        "context": {"type": "string"},
                        "sampleRows": {"type": "array", "items": {"type": "object"}},
                    },
                },
            },
        },
        "RefineResponse": {
            "type": "object",
            "required": ["buildId", "assistantId", "status"],
            "properties": {
                "buildId": {"type": "string", "format": "uuid"},
                "assistantId": {"type": "string", "format": "uuid"},
                "status": {"const": "started"},
            },
        },
        "TextToSpeechBody": {
            "type": "object",
            "required": ["text", "voiceId"],
            "properties": {
                "text": {"type": "string", "maxLength": L.MAX_TTS_TEXT_CHARS},
                "voiceId": {"enum": list(L.VOICE_IDS)},
                "outputFormat": {"enum": list(L.OUTPUT_FORMATS), "default": "MP3_22050_32"},
                "phraseReplacementConfigId": {"type": "string"},
            },
        },
        "PhraseReplacementBody": {
            "type": "object",
            "required": ["phraseReplacements"],
            "properties": {
                "phraseReplacements": {
                    "type": "array",
                    "maxItems": L.MAX_PHRASE_REPLACEMENTS,
                    "items": _ref("PhraseReplacement"),
                }
            },
        },
        "PhraseReplacement": {
            "type": "object",
            "required": ["phrase", "replacement"],
            "properties": {
                "phrase": {"type": "string", "minLength": 1},
                "replacement": {"type": "string"},
            },
        },
        "PhraseReplacementConfig": {
            "type": "object",
            "required": ["configId", "phraseReplacements"],
            "properties": {
                "configId": {"type": "string"},
                "phraseReplacements": {"type": "array", "items": _ref("PhraseReplacement")},
            },
        },
        "ContactList": {
            "type": "object",
            "required": ["listId", "name", "sourceKind", "summary", "contactCount"],
            "properties": {
                "listId": {"type": "string", "format": "uuid"},
                "organizationId": {"type": "string", "format": "uuid"},
                "projectId": {"type": "string", "format": "uuid"},
                "name": {"type": "string"},
                "sourceKind": {"enum": ["csv_upload", "paste", "google_sheets", "customer_api"]},
                "summary": {"type": "object"},
                "contactCount": {"type": "integer"},
                "createdAt": {"type": "string", "format": "date-time"},
                "updatedAt": {"type": "string", "format": "date-time"},
                "version": {"const": 1},
            },
        },
    }


def _op(
    operation_id: str,
    summary: str,
    responses: _S,
    *,
    body: str | None = None,
    params: list[_S] | None = None,
    public: bool = False,
) -> _S:
    op: _S = {"operationId": operation_id, "summary": summary, "responses": responses}
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = {"required": True, **_json(_ref(body))}
    if public:
        op["security"] = []
    return op


def _paths() -> _S:
    auth = {"401": _error("invalid authorization"), "403": _error("Forbidden resource")}
    bad = {"400": _error("validation: one message per failed field")}
    missing = {"404": _error("Realtime assistant not found: <id>")}
    creds = {"description": "session credentials", **_json(_ref("SessionCredentials"))}
    p = [_ID_PARAM]
    ra = "/realtime-assistants"
    return {
        ra: {
            "get": _op(
                "listAssistants",
                "E1. List assistants",
                {
                    "200": {
                        "description": "drafts with aliases",
                        **_json({"type": "array", "items": _ref("AssistantListItem")}),
                    },
                    **auth,
                },
            ),
            "post": _op(
                "createAssistant",
                "E2. Create assistant",
                {"201": {"description": "created", **_json(_ref("Assistant"))}, **bad, **auth},
                body="CreateAssistantBody",
            ),
        },
        ra + "/{realtimeAssistantId}": {
            "post": _op(
                "updateAssistant",
                "E3. Update assistant",
                {
                    "200": {"description": "saved", **_json(_ref("AssistantListItem"))},
                    **bad,
                    **auth,
                    **missing,
                },
                body="UpdateAssistantBody",
                params=p,
            ),
            "delete": _op(
                "deleteAssistant",
                "E4. Delete assistant",
                {"204": {"description": "deleted"}, **auth, **missing},
                params=p,
            ),
        },
        ra + "/{realtimeAssistantId}/metadata": {
            "get": _op(
                "getAssistantMetadata",
                "E5. Get publish state",
                {
                    "200": {"description": "publish state", **_json(_ref("AssistantMetadata"))},
                    **auth,
                    **missing,
                },
                params=p,
            ),
        },
        ra + "/{realtimeAssistantId}/createSession": {
            "post": _op(
                "createSession",
                "E6. Create session",
                {"200": creds, **bad, **auth, **missing},
                body="SessionBody",
                params=p,
            ),
        },
        ra + "/{realtimeAssistantId}/createPublicSession": {
            "post": _op(
                "createPublicSession",
                "E7. Create public session",
                {
                    "200": creds,
                    **bad,
                    "403": _error("Assistant is not available publicly"),
                    **missing,
                },
                body="SessionBody",
                params=p,
                public=True,
            ),
        },
        ra + "/{realtimeAssistantId}/public-session": {
            "post": _op(
                "openPublicSession",
                "E8. Open a session without an API key",
                {
                    "200": creds,
                    **bad,
                    "402": _error("Insufficient credits to start a realtime session"),
                    "403": _error("Assistant is not available publicly"),
                    **missing,
                    "503": _error("Published version <n> of assistant <id> is not readable yet"),
                },
                body="SessionBody",
                params=p,
                public=True,
            ),
        },
        ra + "/builds/{realtimeAssistantId}/simulate": {
            "post": _op(
                "simulate",
                "E9. Rehearse a call",
                {
                    "200": {
                        "description": "event stream: turn*, then done or error",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    },
                    **bad,
                    **auth,
                    **missing,
                    "429": _error("injected fault (Retry-After)"),
                    "503": _error("injected fault"),
                },
                body="SimulateBody",
                params=p,
            ),
        },
        ra + "/builds/{realtimeAssistantId}/refine": {
            "post": _op(
                "refine",
                "E10. Refine a built assistant's prompt",
                {
                    "200": {"description": "build started", **_json(_ref("RefineResponse"))},
                    **bad,
                    **auth,
                    "404": _error("Assistant has no build artifacts to refine"),
                },
                body="RefineBody",
                params=p,
            ),
        },
        "/synthesis/text-to-speech": {
            "post": _op(
                "textToSpeech",
                "E11. Text to speech",
                {
                    "200": {
                        "description": "audio bytes",
                        "content": {
                            t: {"schema": {"type": "string", "format": "binary"}}
                            for t in (
                                "audio/mpeg",
                                "audio/wav",
                                "audio/ogg",
                                "audio/pcm",
                                "audio/basic",
                            )
                        },
                    },
                    "400": _synthesis_error("validation"),
                    **auth,
                    "404": _synthesis_error("unknown phrase replacement config"),
                    "429": _synthesis_error(L.RATE_LIMIT_MESSAGE),
                },
                body="TextToSpeechBody",
            ),
        },
        "/synthesis/phrase-replacement-config": {
            "post": _op(
                "createPhraseReplacementConfig",
                "E12. Create phrase replacement config",
                {
                    "201": {"description": "stored", **_json(_ref("PhraseReplacementConfig"))},
                    "400": _synthesis_error("validation"),
                    **auth,
                    "429": _synthesis_error(L.RATE_LIMIT_MESSAGE),
                },
                body="PhraseReplacementBody",
            ),
        },
        "/contact-lists/{listId}": {
            "get": _op(
                "getContactList",
                "E13. Get a contact list's metadata",
                {
                    "200": {"description": "metadata", **_json(_ref("ContactList"))},
                    **auth,
                    "404": _error("Contact list not found: <id>"),
                },
                params=[
                    {
                        "name": "listId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "format": "uuid"},
                    }
                ],
            ),
        },
    }


def openapi_document(server_url: str = "http://127.0.0.1:8787/v1") -> dict[str, Any]:
    """The OpenAPI 3.1 document of /v1 with ``server_url`` as its server."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Voice assistant service (evalkit emulator)",
            "version": "1.0",
            "description": "The interface of spec/service-interface.md as the emulator serves it.",
        },
        "servers": [{"url": server_url}],
        "security": [{"bearerAuth": []}],
        "paths": _paths(),
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
    }
