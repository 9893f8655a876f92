"""The client and the emulator refuse the same bad bodies with the same messages.

The spec's request rules are written once, on the models in ``evalkit.api``; the client checks
them before it sends (nothing reaches the wire) and the emulator on arrival (its 400). Each case
below is one body: the client is handed it through its public method, and the same JSON is
posted to a real emulator on 127.0.0.1; the messages must be equal, in the same order.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from evalkit import InvalidRequestError
from evalkit.emulator import EmulatorServer

from .conftest import Api, make_config

AID = "0f6f0c4e-1111-4000-8000-000000000000"  # no such assistant: the body is checked first
PERSONA = {"label": "Busy parent", "behavior": "In a hurry; answers in Urdu."}
RA = f"/realtime-assistants/{AID}"


@dataclass(frozen=True)
class Operation:
    """Where a body goes, and how the client is handed the same body."""

    path: str
    send: Callable[[Api, dict[str, Any]], Awaitable[Any]]
    synthesis: bool = False


def _create(api: Api, b: dict[str, Any]) -> Awaitable[Any]:
    extra = {k: b[k] for k in ("description", "public") if k in b}
    return api.create_assistant(b["name"], b["config"], **extra)


OPERATIONS: dict[str, Operation] = {
    "E2": Operation("/realtime-assistants", _create),
    "E3": Operation(RA, lambda api, b: api.update_assistant(AID, **b)),
    "E6": Operation(
        f"{RA}/createSession",
        lambda api, b: api.create_session(AID, b["participantName"], b.get("roomName")),
    ),
    "E8": Operation(
        f"{RA}/public-session",
        lambda api, b: api.open_public_session(AID, b["participantName"], b.get("roomName")),
    ),
    "E9": Operation(
        f"/realtime-assistants/builds/{AID}/simulate",
        lambda api, b: api.collect(
            AID, b["persona"], context=b.get("context"), variables=b.get("variables")
        ),
    ),
    "E10": Operation(
        f"/realtime-assistants/builds/{AID}/refine",
        lambda api, b: api.refine(AID, b["ownerFeedback"]),
    ),
    "E11": Operation(
        "/synthesis/text-to-speech",
        lambda api, b: api.text_to_speech(b["text"], b["voiceId"], b["outputFormat"]),
        synthesis=True,
    ),
    "E12": Operation(
        "/synthesis/phrase-replacement-config",
        lambda api, b: api.create_phrase_replacement_config(b["phraseReplacements"]),
        synthesis=True,
    ),
}


def _config(**parts: Any) -> dict[str, Any]:
    config = make_config()
    config.update(parts)
    return config


def _rules(*points: float, ids: tuple[str, ...] = ()) -> dict[str, Any]:
    ids = ids or tuple(f"rule-{i}" for i in range(len(points)))
    rules = [
        {"ruleId": i, "title": f"Rule {i}", "points": p} for i, p in zip(ids, points, strict=True)
    ]
    return {"rubricVersionId": "reminder-2026-11", "rules": rules}


BAD_TOOL = {"name": "", "description": 5, "timeout": -1, "execution": {"type": "lambda"}}
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("E2-fields", "E2", {"name": "", "public": "yes", "config": "not a config"}),
    (
        "E2-config-limits",
        "E2",
        {
            "name": "Clinic reminder",
            "config": _config(
                grading={"scorecard": _rules(60, 39, ids=("greets", "greets"))},
                session={"ttl": 0, "roomPrefix": "p" * 33},
                noiseCancellation={"model": "nc_xl"},
                backgroundNoise={},
            ),
        },
    ),
    (
        "E2-config-shape",
        "E2",
        {
            "name": "Clinic reminder",
            "config": {
                "agent": {"instructions": "", "tools": [BAD_TOOL]},
                "stt": {"default": {"provider": "vendor_a", "model": 5}, "fallback": {}},
                "tts": {},
                "llm": {"default": {"provider": "vendor_f", "thinkingBudget": 24577}},
            },
        },
    ),
    (
        "E2-scorecard",
        "E2",
        {
            "name": "n",
            "config": _config(
                grading={
                    "scorecard": {
                        "rubricVersionId": "",
                        "rules": [{"ruleId": "", "title": "t", "points": "50"}, {}],
                    }
                }
            ),
        },
    ),
    ("E2-no-rules", "E2", {"name": "n", "config": _config(grading={"scorecard": _rules()})}),
    ("E3", "E3", {"public": "yes", "name": "", "config": {"agent": {}}}),
    ("E6-empty-name", "E6", {"participantName": ""}),
    ("E8-types", "E8", {"participantName": 7, "roomName": 5}),
    (
        "E9-limits",
        "E9",
        {"persona": PERSONA, "context": "ب" * 8001, "variables": {"k" * 65: "v"}},
    ),
    ("E9-json-length", "E9", {"persona": PERSONA, "variables": {"note": "x" * 2989}}),
    ("E9-types", "E9", {"persona": {"label": 1, "path": []}, "context": 5, "variables": ["a"]}),
    ("E10-too-long", "E10", {"ownerFeedback": "f" * 2001}),
    ("E10-not-a-string", "E10", {"ownerFeedback": 42}),
    ("E11", "E11", {"text": "ا" * 2501, "voiceId": "alloy", "outputFormat": "mp3"}),
    (
        "E12-too-many",
        "E12",
        {"phraseReplacements": [{"phrase": f"p{i}", "replacement": "r"} for i in range(1001)]},
    ),
    (
        "E12-items",
        "E12",
        {"phraseReplacements": [{"phrase": "a"}, {"phrase": 1, "replacement": "b"}, "x"]},
    ),
]


@pytest.fixture(scope="module")
def wire(emu: EmulatorServer) -> Iterator[httpx.Client]:
    """Raw HTTP to the emulator, as any other client of the service would send."""
    headers = {"Authorization": f"Bearer {emu.api_key}"}
    with httpx.Client(base_url=emu.base_url, headers=headers, timeout=30) as client:
        yield client


def _emulator_says(wire: httpx.Client, op: Operation, body: Mapping[str, Any]) -> list[str]:
    response = wire.post(op.path, json=body)
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    return [message] if op.synthesis else list(message)


@pytest.mark.parametrize(("operation", "body"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_client_and_emulator_refuse_alike(
    api: Api, wire: httpx.Client, operation: str, body: dict[str, Any]
) -> None:
    op = OPERATIONS[operation]
    with pytest.raises(InvalidRequestError) as refused:
        await op.send(api, copy.deepcopy(body))
    assert api.sent == []  # the client spent nothing
    client_says = [str(p) for p in refused.value.problems]
    assert client_says
    emulator_says = _emulator_says(wire, op, body)
    assert emulator_says == (["; ".join(client_says)] if op.synthesis else client_says)


def test_the_cases_cover_every_operation_with_a_body() -> None:
    assert {c[1] for c in CASES} == set(OPERATIONS)


async def test_what_only_warns_is_sent_and_stored(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    """A save stores what a later call trips over: the client warns, both accept it."""
    config = _config(
        agent={"instructions": "Remind the caller.", "greetingInstructions": "Salaam"},
        tts={"default": {"provider": "serviceai"}},
        llm={"default": {"provider": "vendor_e", "model": "llm-oss-120b", "verbosity": "low"}},
    )
    with caplog.at_level(logging.WARNING, logger="evalkit.api"):
        created = await api.create_assistant("Warned", config)
    assert created.config.to_json() == config
    warned = [r.getMessage() for r in caplog.records]
    for field in ("greetingInstructions", "tts.default.voiceId", "llm.default.verbosity"):
        assert any(field in m for m in warned), field
