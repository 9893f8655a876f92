"""E1–E5 over loopback: create, list, update, delete, publish state; exact config round trips;
project isolation (403), bad keys (401), and bad configs refused before anything is sent."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from evalkit.api import (
    Assistant,
    AssistantMetadata,
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
)
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import NEUTRAL, Api, MakeApi, body_of, make_config, new_project

# A config with a key the spec does not list at every level that takes extra keys, plus values
# that only survive an exact round trip (a float like 0.1 + 0.2, a big int, null, empty
# containers, Urdu text, a key spelled like a model field's Python name).
ODD_CONFIG: dict[str, Any] = {
    "xTop": {"nested": [1, 2.5, None, True, {"deep": "ہاں"}], "empty": {}, "list": []},
    "agent": {
        "instructions": "آپ کلینک کی طرف سے کال کر رہی ہیں۔ Answer in Nastaliq script.",
        "initialGreeting": True,
        "greetingInstructions": "Greet warmly.",
        "initial_greeting": "a snake_case key is an unknown key, kept as sent",
        "xAgent": 0.30000000000000004,
        "tools": [
            {
                "name": "lookup_order",
                "description": "Look up an order by number.",
                "parameters": {
                    "type": "object",
                    "properties": {"orderId": {"type": "string", "xProp": 1}},
                    "required": ["orderId"],
                    "additionalProperties": False,
                },
                "timeout": 7.5,
                "execution": {"type": "tool_endpoint", "connectionId": "conn_1", "xExec": "e"},
                "xTool": [None],
            },
            {
                "name": "end_call",
                "description": "End the call.",
                "parameters": {"type": "object", "properties": {}},
            },
        ],
    },
    "grading": {
        "scorecard": {
            "rubricVersionId": "rv-1",
            "rules": [
                {"ruleId": "greets", "title": "Greets", "points": 40, "check": {"kind": "x"}},
                {"ruleId": "confirms", "title": "Confirms", "points": 60.0},
            ],
            "xScorecard": 12345678901234567890,
        },
        "xGrading": "g",
    },
    "noiseCancellation": {"enabled": True, "model": "nc_vf_l", "level": 0.1, "xNc": 1},
    "backgroundNoise": {"enabled": False, "xBg": "office"},
    "session": {"ttl": 120, "roomPrefix": "clinic-", "xSession": None},
    "stt": {"default": {"provider": "vendor_a", "model": "stt-rt-v5", "context": "c", "x": 1}},
    "tts": {
        "default": {
            "provider": "serviceai",
            "voiceId": "v_kwmp7zxt",
            "outputFormat": "MP3_22050_32",
            "voice_id": "kept too",
            "xTts": {"a": 1},
        }
    },
    "llm": {
        "default": {
            "provider": "vendor_f",
            "model": "gem-2.5-flash",
            "thinkingBudget": 0,
            "apiKey": "customer-provider-key-0001",
            "xLlm": [],
        }
    },
}


def _exact(value: Any) -> str:
    """JSON text that tells 1 from 1.0 and keeps key order: equal texts mean the same value."""
    return json.dumps(value, ensure_ascii=False)


async def _find(api: Api, assistant_id: str) -> Assistant:
    items: list[Assistant] = await api.list_assistants()
    matches = [a for a in items if a.id == assistant_id]
    assert len(matches) == 1, f"{assistant_id} listed {len(matches)} times"
    return matches[0]


async def test_create_returns_the_assistant_without_version_or_aliases(api: Api) -> None:
    created = await api.create_assistant("Reminder", make_config(), description="Reminds")
    assert isinstance(created, Assistant)
    assert created.name == "Reminder"
    assert created.description == "Reminds"
    assert created.public is False
    wire = created.to_json()
    assert {"realtimeAssistantId", "organizationId", "projectId", "config", "createdAt"} <= set(
        wire
    )
    assert {"createdBy", "updatedAt", "updatedBy"} <= set(wire)
    assert "version" not in wire
    assert "aliases" not in wire
    assert created.version is None
    assert created.aliases is None


async def test_list_shows_drafts_with_aliases(api: Api) -> None:
    created = await api.create_assistant("Listed", make_config())
    item = await _find(api, created.id)
    assert item.version == 1
    assert item.aliases is not None
    assert item.aliases.draft.version == 1
    assert item.aliases.draft.updated_at
    assert item.aliases.draft.updated_by
    assert item.aliases.prod is None
    assert item.aliases.draft_ahead is False
    assert item.config.to_json() == make_config()


async def test_config_with_unknown_keys_round_trips_exactly(api: Api) -> None:
    sent = json.loads(json.dumps(ODD_CONFIG))
    created = await api.create_assistant("Odd", sent)
    assert _exact(created.config.to_json()) == _exact(ODD_CONFIG)
    listed = await _find(api, created.id)
    assert listed.config.to_json() == ODD_CONFIG
    assert _exact(listed.config.to_json()) == _exact(ODD_CONFIG)
    # read, written back unchanged, read again: still the same JSON value
    await api.update_assistant(created.id, config=listed.config)
    again = await _find(api, created.id)
    assert again.version == 2
    assert _exact(again.config.to_json()) == _exact(ODD_CONFIG)
    update = next(r for r in api.sent if r.url.path == f"/v1/realtime-assistants/{created.id}")
    assert _exact(body_of(update)["config"]) == _exact(ODD_CONFIG)  # what was sent back


async def test_update_bumps_version_and_moves_draft(api: Api) -> None:
    created = await api.create_assistant("Before", make_config())
    first = await _find(api, created.id)
    assert first.aliases is not None
    await api.update_assistant(created.id, name="After")
    edited = make_config("You call the customer about a changed appointment time.")
    await api.update_assistant(created.id, config=edited)
    item = await _find(api, created.id)
    assert item.name == "After"
    assert item.version == 3
    assert item.config.to_json() == edited
    assert item.aliases is not None
    assert item.aliases.draft.version == 3
    assert item.aliases.draft.updated_at is not None
    assert first.aliases.draft.updated_at is not None
    assert item.aliases.draft.updated_at >= first.aliases.draft.updated_at
    assert item.aliases.prod is None
    meta = await api.get_assistant_metadata(created.id)
    assert meta.aliases.draft.version == 3


async def test_publish_sets_prod_and_later_saves_put_the_draft_ahead(
    api: Api, emu: EmulatorServer
) -> None:
    created = await api.create_assistant("Published", make_config())
    await api.update_assistant(created.id, description="second save")
    emu.publish(created.id)
    meta = await api.get_assistant_metadata(created.id)
    assert meta.aliases.prod is not None
    assert meta.aliases.prod.version == meta.aliases.draft.version == 2
    assert meta.aliases.draft_ahead is False

    await api.update_assistant(created.id, description="third save")
    await api.update_assistant(created.id, description="fourth save")
    meta = await api.get_assistant_metadata(created.id)
    assert meta.aliases.prod is not None
    assert (meta.aliases.draft.version, meta.aliases.prod.version) == (4, 2)
    assert meta.aliases.draft_ahead is True
    listed = await _find(api, created.id)
    assert listed.aliases is not None
    assert listed.aliases.draft_ahead is True
    assert listed.version == 4
    assert listed.description == "fourth save"

    emu.publish(created.id)  # published version numbers skip the saves in between
    meta = await api.get_assistant_metadata(created.id)
    assert meta.aliases.prod is not None
    assert meta.aliases.prod.version == 4
    assert meta.aliases.draft_ahead is False


async def test_metadata_has_publish_state_but_no_config(api: Api) -> None:
    created = await api.create_assistant("Meta", make_config(), description="About")
    meta = await api.get_assistant_metadata(created.id)
    assert isinstance(meta, AssistantMetadata)
    wire = meta.to_json()
    assert "config" not in wire
    assert wire["realtimeAssistantId"] == created.id
    assert (meta.name, meta.description) == ("Meta", "About")
    assert meta.aliases.draft.version == 1
    assert meta.aliases.prod is None


async def test_delete_then_no_new_sessions(api: Api, make_api: MakeApi) -> None:
    created = await api.create_assistant("Doomed", make_config(), public=True)
    before = await api.create_session(created.id, "Early caller")
    assert before.token
    assert await api.delete_assistant(created.id) is None
    assert created.id not in {a.id for a in await api.list_assistants()}
    message = f"Realtime assistant not found: {created.id}"
    with pytest.raises(NotFoundError) as caught:
        await api.create_session(created.id, "Late caller")
    assert caught.value.status_code == 404
    anonymous = make_api(api_key=None)
    with pytest.raises(NotFoundError) as caught:
        await anonymous.open_public_session(created.id, "Late caller")
    assert caught.value.messages == [message]
    assert caught.value.error == "Not Found"


async def test_another_projects_assistant_is_forbidden(
    api: Api, make_api: MakeApi, emu: EmulatorServer
) -> None:
    other = make_api(api_key=new_project(emu)["apiKey"])
    theirs = await other.create_assistant("Theirs", make_config())
    assert theirs.id not in {a.id for a in await api.list_assistants()}
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "metadata": lambda: api.get_assistant_metadata(theirs.id),
        "update": lambda: api.update_assistant(theirs.id, public=True),
        "delete": lambda: api.delete_assistant(theirs.id),
        "session": lambda: api.create_session(theirs.id, "Intruder"),
        "simulate": lambda: api.collect(theirs.id, NEUTRAL),
        "refine": lambda: api.refine(theirs.id, "Be shorter."),
    }
    for name, call in calls.items():
        with pytest.raises(PermissionDeniedError) as caught:
            await call()
        assert caught.value.status_code == 403, name
        assert caught.value.messages == ["Forbidden resource"], name
        assert caught.value.error == "Forbidden", name
    meta = await other.get_assistant_metadata(theirs.id)  # untouched by the attempts
    assert meta.aliases.draft.version == 1


async def test_bad_key_is_unauthorized(make_api: MakeApi, emu: EmulatorServer) -> None:
    bad = make_api(api_key="sk_api_not_a_key_of_this_service_0000")
    known = (await make_api().create_assistant("Known", make_config())).id
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "list": lambda: bad.list_assistants(),
        "create": lambda: bad.create_assistant("X", make_config()),
        "update": lambda: bad.update_assistant(known, public=True),
        "metadata": lambda: bad.get_assistant_metadata(known),
        "delete": lambda: bad.delete_assistant(known),
        "session": lambda: bad.create_session(known, "Caller"),
        "simulate": lambda: bad.collect(known, NEUTRAL),
        "refine": lambda: bad.refine(known, "Be brief."),
        "contact list": lambda: bad.get_contact_list("00000000-0000-4000-8000-000000000000"),
    }
    for name, call in calls.items():
        with pytest.raises(AuthenticationError) as caught:
            await call()
        assert caught.value.status_code == 401, name
        assert caught.value.messages == ["invalid authorization"], name
        assert caught.value.error == "Unauthorized", name
        assert "sk_api_not_a_key" not in str(caught.value), name
    # synthesis failures carry {message} (the spec leaves their `error` field open)
    for call in (
        lambda: bad.text_to_speech("Salaam", "v_8eelc901", "MP3_22050_32"),
        lambda: bad.create_phrase_replacement_config({"a": "b"}),
    ):
        with pytest.raises(AuthenticationError) as caught:
            await call()
        assert caught.value.messages == ["invalid authorization"]
    assert (await make_api().get_assistant_metadata(known)).aliases.draft.version == 1


async def test_missing_key_is_refused_before_sending(make_api: MakeApi) -> None:
    keyless = make_api(api_key=None)
    with pytest.raises(ConfigurationError):
        await keyless.list_assistants()
    assert keyless.sent == []


BAD_CONFIGS: dict[str, tuple[dict[str, Any], str]] = {
    "no agent": ({"llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}}}, "agent"),
    "empty instructions": ({"agent": {"instructions": ""}}, "agent.instructions"),
    "points not 100": (
        make_config(
            grading={
                "scorecard": {
                    "rubricVersionId": "r",
                    "rules": [{"ruleId": "a", "title": "A", "points": 90}],
                }
            }
        ),
        "grading.scorecard.rules",
    ),
    "duplicate rule ids": (
        make_config(
            grading={
                "scorecard": {
                    "rubricVersionId": "r",
                    "rules": [
                        {"ruleId": "a", "title": "A", "points": 50},
                        {"ruleId": "a", "title": "B", "points": 50},
                    ],
                }
            }
        ),
        "grading.scorecard.rules[1].ruleId",
    ),
    "scorecard not an object": (make_config(grading={"scorecard": 7}), "grading.scorecard"),
    "unknown noise model": (
        make_config(noiseCancellation={"enabled": True, "model": "nc_xl"}),
        "noiseCancellation.model",
    ),
    "noise enabled missing": (make_config(noiseCancellation={}), "noiseCancellation.enabled"),
    "background enabled missing": (
        make_config(backgroundNoise={"volume": 1}),
        "backgroundNoise.enabled",
    ),
    "room prefix too long": (make_config(session={"roomPrefix": "p" * 33}), "session.roomPrefix"),
    "ttl below 1": (make_config(session={"ttl": 0}), "session.ttl"),
    "stt without default": (make_config(stt={"primary": {"provider": "vendor_a"}}), "stt"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
async def test_bad_config_is_refused_before_sending(
    case: str, make_api: MakeApi, emu: EmulatorServer
) -> None:
    config, field = BAD_CONFIGS[case]
    api = make_api(api_key=new_project(emu)["apiKey"])
    stats = emu.stats()
    with pytest.raises(InvalidRequestError) as caught:
        await api.create_assistant("Bad", config)
    assert any(f.startswith(f"config.{field}") for f in caught.value.fields), caught.value.fields
    assert api.sent == []
    assert await api.list_assistants() == []
    assert emu.stats() == stats


TOOL_WITHOUT_CONNECTION = {
    "name": "book_slot",
    "description": "Book an appointment slot on the customer's server.",
    "parameters": {"type": "object", "properties": {"slot": {"type": "string"}}},
    "execution": {"type": "tool_endpoint"},
}


async def test_tool_endpoint_without_connection_id_is_stored(api: Api) -> None:
    config = make_config()
    config["agent"]["tools"] = [TOOL_WITHOUT_CONNECTION]
    created = await api.create_assistant("Webhook tool", config)
    assert (await _find(api, created.id)).config.to_json() == config


async def test_tool_endpoint_with_an_unchecked_connection_id_is_stored(api: Api) -> None:
    tool = {
        **TOOL_WITHOUT_CONNECTION,
        "execution": {"type": "tool_endpoint", "connectionId": "nope"},
    }
    config = make_config()
    config["agent"]["tools"] = [tool]
    created = await api.create_assistant("Wrong connection", config)
    assert (await _find(api, created.id)).config.to_json() == config
