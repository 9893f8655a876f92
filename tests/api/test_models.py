"""The API models: exact round trips of configs with unknown keys, provider unions, numbers, reprs."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.api import (
    AgentConfig,
    ApiModel,
    Assistant,
    AssistantConfig,
    AssistantMetadata,
    ContactList,
    ErrorEnvelope,
    LlmConfig,
    NoiseCancellation,
    OtherProviderConfig,
    ServiceAiSttConfig,
    ServiceAiTtsConfig,
    SessionConfig,
    SessionCredentials,
    VendorASttConfig,
    VendorATtsConfig,
    VendorBSttConfig,
    VendorCSttConfig,
    VendorCTtsConfig,
    VendorDSttConfig,
)

#: A config that uses every documented part, with unknown keys at every level, some of them
#: placed before the documented keys so key order is tested too.
FULL: dict[str, Any] = {
    "xTopFirst": {"nested": [1, 2.5, None, True, "ب"]},
    "agent": {
        "instructions": "Remind the patient. Answer in Nastaliq script.",
        "xAgent": "kept",
        "initialGreeting": True,
        "greetingInstructions": "Greet warmly in Urdu.",
        "tools": [
            {
                "xTool": {"a": [1]},
                "name": "book_slot",
                "description": "Books an appointment slot",
                "parameters": {
                    "type": "object",
                    "properties": {"slot": {"type": "string", "format": "date-time"}},
                    "required": ["slot"],
                    "additionalProperties": False,
                },
                "timeout": 7.5,
                "execution": {"type": "tool_endpoint", "connectionId": "te_1", "xExec": 0},
            },
            {
                "name": "hang_up",
                "description": "Ends the call",
                "parameters": {"type": "object", "properties": {}},
                "timeout": 10,
            },
        ],
    },
    "grading": {
        "scorecard": {
            "rubricVersionId": "reminder-2026-03",
            "rules": [
                {
                    "ruleId": "urdu-script",
                    "title": "Agent answers in Urdu script",
                    "points": 25,
                    "check": {"type": "script", "script": "arabic", "min_share": 0.8},
                },
                {"ruleId": "confirms", "title": "Confirms the slot", "points": 75.0, "xRule": 1},
            ],
            "xScorecard": {"frozen": False},
        },
        "xGrading": None,
    },
    "noiseCancellation": {"enabled": True, "model": "nc_vf_l", "level": 0.1, "xNc": [0]},
    "backgroundNoise": {"xBn": "office", "enabled": False},
    "session": {"ttl": 600, "roomPrefix": "clinic", "xSession": 1.0},
    "stt": {
        "default": {
            "provider": "vendor_a",
            "model": "stt-rt-v5",
            "language": "ur",
            "context": "clinic names",
            "apiKey": "stt-provider-key-0001",
            "xStt": {"endpointing": 300},
        }
    },
    "tts": {"default": {"provider": "serviceai", "voiceId": "v_8eelc901", "xTts": True}},
    "llm": {
        "default": {
            "provider": "vendor_f",
            "model": "gem-2.5-flash",
            "thinkingBudget": -1,
            "temperature": 0.2,
            "xLlm": {},
        }
    },
    "xTopLast": "",
}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def assert_round_trip(config: dict[str, Any]) -> None:
    out = AssistantConfig.model_validate(config).to_json()
    assert out == config
    assert dumps(out) == dumps(config)  # key order and int/float kept
    from_text = AssistantConfig.model_validate_json(dumps(config)).to_json()
    assert dumps(from_text) == dumps(config)


# --------------------------------------------------------------------------- round trips


def test_full_config_with_unknown_keys_round_trips_exactly() -> None:
    assert_round_trip(FULL)


def test_round_trip_inside_an_assistant() -> None:
    assistant = {
        "realtimeAssistantId": "a1",
        "xBeforeName": 1,
        "name": "Reminder",
        "config": FULL,
        "version": 4,
        "aliases": {"draft": {"version": 4, "xAlias": 1}, "prod": {"version": 2}, "xAliases": 0},
        "xAfter": [None],
    }
    out = Assistant.model_validate_json(dumps(assistant)).to_json()
    assert dumps(out) == dumps(assistant)


def test_round_trip_does_not_mutate_its_input() -> None:
    before = copy.deepcopy(FULL)
    AssistantConfig.model_validate(FULL).to_json()
    assert before == FULL


def test_minimal_config_dumps_minimal() -> None:
    minimal = {"agent": {"instructions": "x"}}
    assert AssistantConfig.model_validate(minimal).to_json() == minimal
    assert AssistantConfig(agent=AgentConfig(instructions="x")).to_json() == minimal


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (NoiseCancellation, {"enabled": True}),
        (SessionConfig, {}),
        (VendorASttConfig, {"provider": "vendor_a"}),
        (ServiceAiTtsConfig, {"provider": "serviceai"}),
        (LlmConfig, {"provider": "vendor_c", "model": "llm-5.4-mini"}),
        (AssistantMetadata, {"realtimeAssistantId": "a", "aliases": {"draft": {"version": 1}}}),
        (
            Assistant,
            {"realtimeAssistantId": "a", "name": "n", "config": {"agent": {"instructions": "i"}}},
        ),
    ],
)
def test_no_defaults_are_injected(model: type[ApiModel], data: dict[str, Any]) -> None:
    assert model.model_validate(data).to_json() == data


def test_models_built_in_python_dump_camel_case_and_only_what_was_set() -> None:
    agent = AgentConfig(instructions="x", initial_greeting=True)
    assert agent.to_json() == {"instructions": "x", "initialGreeting": True}
    nc = NoiseCancellation(enabled=True, level=0.3)
    assert nc.to_json() == {"enabled": True, "level": 0.3}


def test_explicit_nulls_survive() -> None:
    config = {"agent": {"instructions": "x", "tools": None}, "grading": {"scorecard": None}}
    assert_round_trip(config)


@pytest.mark.parametrize(
    "config",
    [
        {"agent": {"instructions": "x", "initial_greeting": True}},
        {"agent": {"instructions": "x"}, "session": {"room_prefix": "abc"}},
        {"agent": {"instructions": "x"}, "noise_cancellation": {"enabled": True}},
    ],
)
def test_snake_case_twin_of_a_field_is_renamed(config: dict[str, Any]) -> None:
    assert AssistantConfig.model_validate(config).to_json() == config


# --------------------------------------------------------------------------- hypothesis


def _field_names(model: type[ApiModel]) -> set[str]:
    """Every field name and alias of ``model`` and its subclasses (keys the models interpret)."""
    names = {n for n in model.model_fields} | {
        i.alias for i in model.model_fields.values() if i.alias
    }
    for sub in model.__subclasses__():
        names |= _field_names(sub)
    return names


_FIELD_NAMES = _field_names(ApiModel)

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_value = st.recursive(
    json_leaf,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)
extra_key = st.text(min_size=0, max_size=12).filter(lambda k: k not in _FIELD_NAMES)

#: every object of FULL a user could put unknown keys into
LOCATIONS: list[tuple[Any, ...]] = [
    (),
    ("agent",),
    ("agent", "tools", 0),
    ("agent", "tools", 0, "parameters"),
    ("agent", "tools", 0, "execution"),
    ("agent", "tools", 1),
    ("grading",),
    ("grading", "scorecard"),
    ("grading", "scorecard", "rules", 0),
    ("grading", "scorecard", "rules", 1),
    ("noiseCancellation",),
    ("backgroundNoise",),
    ("session",),
    ("stt",),
    ("stt", "default"),
    ("tts",),
    ("tts", "default"),
    ("llm",),
    ("llm", "default"),
]


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _insert(obj: dict[str, Any], key: str, value: Any, index: int) -> None:
    items = list(obj.items())
    items.insert(index % (len(items) + 1), (key, value))
    obj.clear()
    obj.update(items)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_unknown_keys_anywhere_round_trip(data: st.DataObject) -> None:
    config = copy.deepcopy(FULL)
    for path in data.draw(st.lists(st.sampled_from(LOCATIONS), min_size=1, max_size=6)):
        target = _at(config, path)
        key = data.draw(extra_key.filter(lambda k, t=target: k not in t))
        _insert(target, key, data.draw(json_value), data.draw(st.integers(0, 10)))
    assert_round_trip(config)


@settings(max_examples=60, deadline=None)
@given(
    points=st.lists(
        st.integers(0, 100) | st.floats(0, 100, allow_nan=False), min_size=1, max_size=4
    ),
    level=st.integers(0, 5) | st.floats(0, 5, allow_nan=False),
    timeout=st.integers(0, 60) | st.floats(0, 60, allow_nan=False),
    extra=json_value,
)
def test_numbers_keep_their_json_type(
    points: list[float], level: float, timeout: float, extra: Any
) -> None:
    config = {
        "agent": {
            "instructions": "x",
            "tools": [
                {
                    "name": "t",
                    "description": "d",
                    "parameters": {"type": "object", "properties": {}},
                    "timeout": timeout,
                }
            ],
        },
        "grading": {
            "scorecard": {
                "rubricVersionId": "r",
                "rules": [
                    {"ruleId": f"r{i}", "title": "t", "points": p} for i, p in enumerate(points)
                ],
            }
        },
        "noiseCancellation": {"enabled": True, "level": level},
        "xExtra": extra,
    }
    out = AssistantConfig.model_validate(config).to_json()
    assert dumps(out) == dumps(config)
    rules = out["grading"]["scorecard"]["rules"]
    assert [type(r["points"]) for r in rules] == [type(p) for p in points]
    assert type(out["noiseCancellation"]["level"]) is type(level)
    assert type(out["agent"]["tools"][0]["timeout"]) is type(timeout)


def test_ints_and_floats_of_equal_value_stay_apart() -> None:
    config = {
        "agent": {"instructions": "x"},
        "grading": {
            "scorecard": {
                "rubricVersionId": "r",
                "rules": [
                    {"ruleId": "a", "title": "A", "points": 50},
                    {"ruleId": "b", "title": "B", "points": 50.0},
                ],
            }
        },
        "noiseCancellation": {"enabled": True, "level": 1},
    }
    text = dumps(AssistantConfig.model_validate(config).to_json())
    assert '"points": 50}' in text
    assert '"points": 50.0}' in text
    assert '"level": 1}' in text


# --------------------------------------------------------------------------- provider unions


@pytest.mark.parametrize(
    ("provider", "cls"),
    [
        ("vendor_a", VendorASttConfig),
        ("vendor_b", VendorBSttConfig),
        ("vendor_c", VendorCSttConfig),
        ("vendor_d", VendorDSttConfig),
        ("serviceai", ServiceAiSttConfig),
        ("vendor_z", OtherProviderConfig),
        ("vendor_e", OtherProviderConfig),  # an LLM-only provider is no STT provider
    ],
)
def test_stt_union_picks_the_provider_model(provider: str, cls: type[ApiModel]) -> None:
    config = {
        "agent": {"instructions": "x"},
        "stt": {"default": {"provider": provider, "model": "m-1", "futureKnob": [1, 2]}},
    }
    model = AssistantConfig.model_validate(config)
    assert model.stt is not None
    assert type(model.stt.default) is cls
    assert_round_trip(config)


@pytest.mark.parametrize(
    ("provider", "cls"),
    [
        ("serviceai", ServiceAiTtsConfig),
        ("vendor_c", VendorCTtsConfig),
        ("vendor_a", VendorATtsConfig),
        ("vendor_b", OtherProviderConfig),
        ("vendor_new", OtherProviderConfig),
    ],
)
def test_tts_union_picks_the_provider_model(provider: str, cls: type[ApiModel]) -> None:
    config = {
        "agent": {"instructions": "x"},
        "tts": {"default": {"provider": provider, "voiceId": "alloy", "speed": 1.1}},
    }
    model = AssistantConfig.model_validate(config)
    assert model.tts is not None
    assert type(model.tts.default) is cls
    assert_round_trip(config)


def test_provider_models_expose_typed_fields() -> None:
    model = AssistantConfig.model_validate(FULL)
    assert model.stt is not None
    stt = model.stt.default
    assert isinstance(stt, VendorASttConfig)
    assert stt.model == "stt-rt-v5"
    assert stt.api_key == "stt-provider-key-0001"
    assert model.tts is not None
    tts = model.tts.default
    assert isinstance(tts, ServiceAiTtsConfig)
    assert tts.voice_id == "v_8eelc901"
    assert model.llm is not None
    assert model.llm.default.thinking_budget == -1
    assert model.noise_cancellation is not None
    assert model.noise_cancellation.model == "nc_vf_l"
    assert model.session is not None
    assert model.session.room_prefix == "clinic"


def test_unknown_provider_keeps_everything() -> None:
    block = {"provider": "vendor_q", "apiKey": "q-key-123456", "region": "ap-south", "n": 3}
    config = {"agent": {"instructions": "x"}, "stt": {"default": block}, "tts": {"default": block}}
    model = AssistantConfig.model_validate(config)
    assert model.stt is not None
    assert isinstance(model.stt.default, OtherProviderConfig)
    assert model.stt.default.api_key == "q-key-123456"
    assert_round_trip(config)


def test_llm_with_an_unknown_provider_round_trips() -> None:
    config = {
        "agent": {"instructions": "x"},
        "llm": {"default": {"provider": "vendor_new", "model": "m-9", "topK": 40}},
    }
    assert_round_trip(config)


# --------------------------------------------------------------------------- reprs


def _config_with_keys() -> AssistantConfig:
    config = copy.deepcopy(FULL)
    config["stt"]["default"]["apiKey"] = "STTSECRETVALUE-1111"
    config["tts"]["default"] = {"provider": "vendor_c", "apiKey": "TTSSECRETVALUE-2222"}
    config["llm"]["default"]["apiKey"] = "LLMSECRETVALUE-3333"
    return AssistantConfig.model_validate(config)


def test_repr_masks_provider_api_keys() -> None:
    model = _config_with_keys()
    for text in (repr(model), str(model)):
        for secret in ("STTSECRETVALUE", "TTSSECRETVALUE", "LLMSECRETVALUE"):
            assert secret not in text
    # the rest of the config is still visible
    assert "gem-2.5-flash" in repr(model)


@pytest.mark.parametrize(
    "block",
    [
        {"provider": "serviceai", "apiKey": "SVCSECRETVALUE-4444"},  # apiKey as an unknown key
        {"provider": "vendor_zz", "apiKey": "ZZSECRETVALUE-5555"},
    ],
)
def test_repr_masks_api_keys_of_any_provider(block: dict[str, Any]) -> None:
    model = AssistantConfig.model_validate(
        {"agent": {"instructions": "x"}, "stt": {"default": block}}
    )
    assert block["apiKey"][:-5] not in repr(model)
    assert block["apiKey"][:-5] not in str(model)


def test_repr_masks_project_keys_in_any_string_field() -> None:
    key = "sk_api_LeakyKey0123456789abcdef"
    assistant = Assistant.model_validate(
        {
            "realtimeAssistantId": "a",
            "name": "n",
            "config": {"agent": {"instructions": "x"}},
            "createdBy": key,
            "updatedBy": key,
            "note": key,
        }
    )
    assert key not in repr(assistant)
    assert key not in str(assistant)
    assert "sk_api_" in repr(assistant)  # masked, not dropped
    assert assistant.created_by == key  # the value itself is untouched


@pytest.mark.parametrize(
    "extra",
    [
        {"webhook": {"apiKey": "NESTEDSECRETVALUE-6666"}},
        {"owners": ["sk_api_NestedProjectKey0123456789"]},
    ],
)
def test_repr_masks_secrets_inside_unknown_values(extra: dict[str, Any]) -> None:
    model = AssistantConfig.model_validate({"agent": {"instructions": "x"}, **extra})
    text = repr(model)
    assert "NESTEDSECRETVALUE" not in text
    assert "NestedProjectKey" not in text


def test_session_credentials_repr_hides_the_token() -> None:
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.SIGNATUREPART"
    creds = SessionCredentials.model_validate(
        {"token": token, "wsUrl": "wss://rooms.test", "roomName": "r"}
    )
    for text in (repr(creds), str(creds)):
        assert token not in text
        assert "SIGNATUREPART" not in text
        assert "wss://rooms.test" in text
    assert creds.token == token


# --------------------------------------------------------------------------- other models


@pytest.mark.parametrize(
    ("body", "messages"),
    [
        (
            {"message": "invalid authorization", "error": "Unauthorized", "statusCode": 401},
            ["invalid authorization"],
        ),
        (
            {"message": ["a must be a string", "b is required"], "error": "Bad Request"},
            ["a must be a string", "b is required"],
        ),
        ({"message": []}, []),
        ({"statusCode": 503}, []),
        ({}, []),
    ],
)
def test_error_envelope_messages(body: dict[str, Any], messages: list[str]) -> None:
    envelope = ErrorEnvelope.model_validate(body)
    assert envelope.messages == messages
    assert envelope.to_json() == body


def test_error_envelope_without_error_field() -> None:
    envelope = ErrorEnvelope.model_validate(
        {"message": "Published version 3 of assistant a is not readable yet", "statusCode": 503}
    )
    assert envelope.error is None
    assert envelope.status_code == 503


def test_contact_list_round_trips() -> None:
    data = {
        "listId": "l",
        "name": "n",
        "sourceKind": "paste",
        "summary": {"willBeCalled": 0, "excluded": {"dnc": 2}, "errors": []},
        "contactCount": 0,
        "version": 1,
    }
    model = ContactList.model_validate(data)
    assert model.summary.excluded is not None
    assert model.summary.excluded.dnc == 2
    assert model.to_json() == data
