"""The generated OpenAPI document: built from the models and limits, and the server says what
it says (nulls for optional fields, required bodies, provider field types, stream events)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from evalkit.api import _limits as L
from evalkit.emulator import EmulatorServer, openapi_document

from .helpers import create_assistant, make_config, parse_sse

DOC = openapi_document()
SCHEMAS = DOC["components"]["schemas"]


def validator(name: str) -> Draft202012Validator:
    """A validator of one component, resolving the document's local references."""
    registry: Registry[Any] = Registry().with_resource(
        "urn:doc",
        Resource.from_contents({**DOC, "$schema": "https://json-schema.org/draft/2020-12/schema"}),
    )
    schema = {"$ref": f"urn:doc#/components/schemas/{name}"}
    return Draft202012Validator(schema, registry=registry)


def test_the_served_document_is_the_generated_one(
    client: httpx.Client, emu: EmulatorServer
) -> None:
    served = client.get("/openapi.json").json()
    assert served == openapi_document(emu.base_url)
    operation_ids = {op["operationId"] for item in DOC["paths"].values() for op in item.values()}
    assert len(operation_ids) == 13


def test_limits_come_from_the_limits_module_and_none_are_invented() -> None:
    text = json.dumps(DOC)
    rules = SCHEMAS["Scorecard"]["properties"]["rules"]
    assert rules["minItems"] == 1
    assert "maxItems" not in rules
    tools = SCHEMAS["AgentConfig"]["properties"]["tools"]
    assert "maxItems" not in json.dumps(tools)
    assert (
        SCHEMAS["SimulateBody"]["properties"]["context"]["anyOf"][0]["maxLength"]
        == L.MAX_CONTEXT_CHARS
    )
    assert (
        SCHEMAS["EmulatorRefineBody"]["properties"]["ownerFeedback"]["maxLength"]
        == L.MAX_OWNER_FEEDBACK_CHARS
    )
    assert (
        SCHEMAS["EmulatorTextToSpeechBody"]["properties"]["text"]["maxLength"]
        == L.MAX_TTS_TEXT_CHARS
    )
    assert (
        SCHEMAS["PhraseReplacementBody"]["properties"]["phraseReplacements"]["maxItems"]
        == L.MAX_PHRASE_REPLACEMENTS
    )
    session = SCHEMAS["SessionConfig"]["properties"]
    assert session["roomPrefix"]["anyOf"][0]["maxLength"] == L.MAX_ROOM_PREFIX_CHARS
    assert session["ttl"]["anyOf"][0]["minimum"] == L.MIN_SESSION_TTL_S
    assert '"maxItems": 3' not in text
    assert '"maxItems": 4' not in text


def test_every_body_is_required_in_the_document() -> None:
    for item in DOC["paths"].values():
        for op in item.values():
            if "requestBody" in op:
                assert op["requestBody"]["required"] is True


@pytest.mark.parametrize(
    ("path", "method"),
    [("/realtime-assistants/{id}", "POST"), ("/realtime-assistants/builds/{id}/simulate", "POST")],
    ids=["E3", "E9"],
)
def test_a_missing_body_is_a_400_before_anything_happens(
    client: httpx.Client, emu: EmulatorServer, path: str, method: str
) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    response = client.request(method, path.replace("{id}", aid), content=b"")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"] == "Bad Request"
    assert emu.stats()["started"] == 0
    assert client.get("/realtime-assistants").json()[0]["version"] == 1


def test_null_for_an_optional_field_is_accepted_as_absent(client: httpx.Client) -> None:
    config = make_config()
    config["agent"]["greetingInstructions"] = None
    config["session"] = {"roomPrefix": None, "ttl": None}
    body = {"name": "n", "description": None, "public": None, "config": config}
    assert validator("CreateAssistantBody").is_valid(body)
    created = client.post("/realtime-assistants", json=body)
    assert created.status_code == 201, created.text
    assert "description" not in created.json()
    assert created.json()["config"] == config  # stored as sent
    aid = created.json()["realtimeAssistantId"]
    updated = client.post(f"/realtime-assistants/{aid}", json={"name": None, "description": None})
    assert updated.status_code == 200
    assert updated.json()["name"] == "n"
    listed = client.get("/realtime-assistants").json()
    assert validator("AssistantList").is_valid(listed)
    session = {"participantName": "A", "roomName": None}
    assert client.post(f"/realtime-assistants/{aid}/createSession", json=session).status_code == 200


def test_a_provider_field_of_the_wrong_type_is_not_stored(client: httpx.Client) -> None:
    config = make_config()
    config["stt"] = {"default": {"provider": "vendor_a", "model": 5}}
    response = client.post("/realtime-assistants", json={"name": "n", "config": config})
    assert response.status_code == 400
    assert any("config.stt.default.model" in m for m in response.json()["message"])
    assert client.get("/realtime-assistants").json() == []
    stored_shape = {"realtimeAssistantId": "x", "name": "n", "config": config}
    assert not validator("Assistant").is_valid(stored_shape)  # what the document forbids


def test_an_unknown_provider_is_still_stored_and_conforms(client: httpx.Client) -> None:
    config = make_config()
    config["stt"] = {"default": {"provider": "vendor_zz", "model": 5}}
    created = client.post("/realtime-assistants", json={"name": "n", "config": config})
    assert created.status_code == 201
    assert validator("Assistant").is_valid(created.json())


def test_stream_events_conform_to_their_schemas(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    path = f"/realtime-assistants/builds/{aid}/simulate"
    with client.stream("POST", path, json={"persona": {"label": "p"}}) as response:
        events = parse_sse(list(response.iter_lines()))
    assert events
    assert events[-1][0] == "done"
    for name, data in events:
        event = {"event": name, "data": json.dumps(data)}
        assert validator("EventStream").is_valid(event)
        assert validator(f"{name.title()}Event").is_valid(data)
    assert not validator("TurnEvent").is_valid({"index": 0, "role": "agent", "text": "x"})
