"""E1–E13 through Client and AsyncClient over httpx.MockTransport: method, path, body, auth, results."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from evalkit.api import (
    Assistant,
    AssistantConfig,
    AssistantMetadata,
    AsyncSimulationStream,
    BadRequestError,
    ContactList,
    Done,
    InvalidRequestError,
    PhraseReplacementConfig,
    RefineResponse,
    RetryPolicy,
    ServiceAiTtsConfig,
    SessionCredentials,
    SimulationFailed,
    StreamDropped,
    Transcript,
    TranscriptTurn,
    Turn,
    UnexpectedResponseError,
    VendorASttConfig,
)

from .twins import BASE, KEY, Answer, run_on
from .twins import Server as RecordingServer

AID = "3f1c2b9e-8a44-4c1e-9d57-0b6a1f2e7c10"
LID = "9b2e6d1a-1f0c-4e7b-8a3d-5c4b3a291807"
ORG = "11111111-2222-4333-8444-555555555555"
PRJ = "66666666-7777-4888-9999-000000000000"
TS = "2026-03-01T10:00:00.000Z"

CONFIG: dict[str, Any] = {
    "agent": {"instructions": "Confirm the appointment. Answer in Nastaliq script."},
    "stt": {"default": {"provider": "vendor_a", "model": "stt-rt-v5", "language": "ur"}},
    "tts": {"default": {"provider": "serviceai", "voiceId": "v_8eelc901"}},
    "llm": {"default": {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingBudget": 0}},
    "customerTag": {"team": "growth"},
}
ALIASES = {
    "draft": {"version": 5, "updatedAt": TS, "updatedBy": "portal:ayesha@example.com"},
    "prod": {"version": 3, "updatedAt": TS, "updatedBy": "portal:ayesha@example.com"},
}
CREATED = {
    "realtimeAssistantId": AID,
    "organizationId": ORG,
    "projectId": PRJ,
    "name": "Reminder",
    "description": "Appointment reminders",
    "config": CONFIG,
    "public": False,
    "createdAt": TS,
    "updatedAt": TS,
    "createdBy": "sk_api_…cdef",
    "updatedBy": "sk_api_…cdef",
}
LISTED = {**CREATED, "version": 5, "aliases": ALIASES}
METADATA = {
    "realtimeAssistantId": AID,
    "name": "Reminder",
    "description": "Appointment reminders",
    "aliases": {"draft": ALIASES["draft"]},
}
CREDENTIALS = {
    "token": "eyJhbGciOiJIUzI1NiJ9.e30.sig",
    "wsUrl": "wss://rooms.test",
    "roomName": "r_1",
}
REFINED = {
    "buildId": "0b7a3c52-31f4-4b8e-a2c1-7d9e6f5a4b3c",
    "assistantId": AID,
    "status": "started",
}
PHRASES = [{"phrase": "Dr.", "replacement": "ڈاکٹر"}, {"phrase": "ok", "replacement": "ٹھیک"}]
PRC = {"configId": "prc_01", "phraseReplacements": PHRASES}
CONTACT_LIST = {
    "listId": LID,
    "organizationId": ORG,
    "projectId": PRJ,
    "name": "March reminders",
    "sourceKind": "csv_upload",
    "summary": {
        "willBeCalled": 2,
        "excluded": {
            "invalidPhone": 1,
            "missingName": 0,
            "duplicate": 1,
            "dnc": 0,
            "recentlyCalled": 0,
        },
        "errors": [{"row": 4, "issue": "duplicate", "value": "+923001234567"}],
    },
    "contactCount": 2,
    "createdAt": TS,
    "updatedAt": TS,
    "version": 1,
}
AUDIO = b"ID3\x03\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"
PERSONA = {"label": "Busy nurse", "behavior": "You are in a hurry.", "path": "negative"}

TURN_1 = {"index": 1, "role": "agent", "text": "السلام علیکم"}
TURN_2 = {"index": 2, "role": "caller", "text": "Jee? Main busy hoon."}
DONE = {
    "personaId": "p_123",
    "personaLabel": "Busy nurse",
    "archetype": "happy",
    "path": "negative",
    "turns": [
        {"speaker": "agent", "text": TURN_1["text"]},
        {"speaker": "caller", "text": TURN_2["text"]},
    ],
}


def sse(*frames: tuple[str, dict[str, Any]]) -> bytes:
    """An event-stream body, with a keepalive comment between events."""
    out = ": ping\n\n"
    for name, data in frames:
        out += f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n: ping\n\n"
    return out.encode()


SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8"}
SSE_DONE = sse(("turn", TURN_1), ("turn", TURN_2), ("done", DONE))


# --------------------------------------------------------------------------- the twin harness


def reply(status: int = 200, **kwargs: Any) -> Callable[[httpx.Request], httpx.Response]:
    """An answer that builds a fresh response for every request."""
    return lambda request: httpx.Response(status, **kwargs)


class Server(RecordingServer):
    """The shared recording server, plus the single request and its JSON body."""

    @property
    def request(self) -> httpx.Request:
        assert len(self.requests) == 1, f"expected one request, saw {len(self.requests)}"
        return self.requests[0]

    def body(self) -> Any:
        content = self.request.content
        return json.loads(content) if content else None


@dataclass
class Twin:
    """Runs one call through Client (sync) or AsyncClient (async), so tests are written once."""

    kind: str

    def run(self, server: Server, fn: Callable[[Any], Any], **client_kwargs: Any) -> Any:
        client_kwargs.setdefault("api_key", KEY)
        client_kwargs.setdefault("retry", RetryPolicy.no_wait())
        transport = httpx.MockTransport(server)
        return run_on(self.kind, fn, BASE, transport=transport, **client_kwargs)

    def call(self, server: Server, method: str, *args: Any, **kwargs: Any) -> Any:
        return self.run(server, lambda c: getattr(c, method)(*args, **kwargs))


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin(request.param)


def drain(stream: Any) -> Any:
    """Every event of a simulate stream (a coroutine for the async twin)."""
    if isinstance(stream, AsyncSimulationStream):

        async def go() -> list[Any]:
            return [event async for event in stream]

        return go()
    return list(stream)


# --------------------------------------------------------------------------- E1–E13 on the wire

# method name, args, kwargs, HTTP method, path, exact JSON body (None: no body), auth, answer
WIRE_CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], str, str, Any, bool, Answer]] = [
    ("list_assistants", (), {}, "GET", "/realtime-assistants", None, True, reply(json=[LISTED])),
    (
        "create_assistant",
        ("Reminder", CONFIG),
        {},
        "POST",
        "/realtime-assistants",
        {"name": "Reminder", "config": CONFIG},
        True,
        reply(201, json=CREATED),
    ),
    (
        "update_assistant",
        (AID,),
        {"public": True},
        "POST",
        f"/realtime-assistants/{AID}",
        {"public": True},
        True,
        reply(json={**CREATED, "public": True}),
    ),
    (
        "delete_assistant",
        (AID,),
        {},
        "DELETE",
        f"/realtime-assistants/{AID}",
        None,
        True,
        reply(204),
    ),
    (
        "get_assistant_metadata",
        (AID,),
        {},
        "GET",
        f"/realtime-assistants/{AID}/metadata",
        None,
        True,
        reply(json=METADATA),
    ),
    (
        "create_session",
        (AID, "Ayesha"),
        {},
        "POST",
        f"/realtime-assistants/{AID}/createSession",
        {"participantName": "Ayesha"},
        True,
        reply(201, json=CREDENTIALS),
    ),
    (
        "create_public_session",
        (AID, "Ayesha", "lobby"),
        {},
        "POST",
        f"/realtime-assistants/{AID}/createPublicSession",
        {"participantName": "Ayesha", "roomName": "lobby"},
        False,
        reply(201, json=CREDENTIALS),
    ),
    (
        "open_public_session",
        (AID, "Ayesha"),
        {},
        "POST",
        f"/realtime-assistants/{AID}/public-session",
        {"participantName": "Ayesha"},
        False,
        reply(json=CREDENTIALS),
    ),
    (
        "refine",
        (AID, "Greet in Urdu and keep it short."),
        {},
        "POST",
        f"/realtime-assistants/builds/{AID}/refine",
        {"ownerFeedback": "Greet in Urdu and keep it short."},
        True,
        reply(json=REFINED),
    ),
    (
        "text_to_speech",
        ("آپ کا اپائنٹمنٹ کل ہے", "v_kwmp7zxt", "MP3_22050_64"),
        {},
        "POST",
        "/synthesis/text-to-speech",
        {"text": "آپ کا اپائنٹمنٹ کل ہے", "voiceId": "v_kwmp7zxt", "outputFormat": "MP3_22050_64"},
        True,
        reply(content=AUDIO, headers={"content-type": "audio/mpeg"}),
    ),
    (
        "create_phrase_replacement_config",
        (PHRASES,),
        {},
        "POST",
        "/synthesis/phrase-replacement-config",
        {"phraseReplacements": PHRASES},
        True,
        reply(201, json=PRC),
    ),
    (
        "get_contact_list",
        (LID,),
        {},
        "GET",
        f"/contact-lists/{LID}",
        None,
        True,
        reply(json=CONTACT_LIST),
    ),
]


@pytest.mark.parametrize(
    ("method", "args", "kwargs", "http_method", "path", "body", "auth", "answer"),
    WIRE_CASES,
    ids=[case[0] for case in WIRE_CASES],
)
def test_request_on_the_wire(
    twin: Twin,
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    http_method: str,
    path: str,
    body: Any,
    auth: bool,
    answer: Answer,
) -> None:
    server = Server(answer)
    twin.call(server, method, *args, **kwargs)
    request = server.request
    assert request.method == http_method
    assert str(request.url) == BASE + path
    assert server.body() == body
    if body is not None:
        assert request.headers["content-type"] == "application/json"
        # key order too: exactly what the caller gave, nothing added
        assert json.dumps(server.body(), ensure_ascii=False) == json.dumps(body, ensure_ascii=False)
    if auth:
        assert request.headers["authorization"] == f"Bearer {KEY}"
    else:
        assert "authorization" not in request.headers


def test_simulate_on_the_wire(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    variables = {"name": "Ayesha", "slot": "kal 10 baje", "visits": 3}
    twin.run(
        server,
        lambda c: c.simulate(
            AID, PERSONA, context="Clinic reminder call.", variables=variables
        ).collect(),
    )
    request = server.request
    assert request.method == "POST"
    assert str(request.url) == f"{BASE}/realtime-assistants/builds/{AID}/simulate"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "text/event-stream"
    assert server.body() == {
        "persona": PERSONA,
        "context": "Clinic reminder call.",
        "variables": variables,
    }


def test_simulate_sends_only_what_was_given(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    twin.run(server, lambda c: c.simulate(AID, {"label": "X", "behavior": "Y"}).collect())
    assert server.body() == {"persona": {"label": "X", "behavior": "Y"}}


def test_simulate_takes_a_persona_object(twin: Twin) -> None:
    @dataclass
    class P:
        label: str
        behavior: str
        path: str = "negative"

    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    twin.run(server, lambda c: c.simulate(AID, P("Busy nurse", "You are in a hurry.")).collect())
    assert server.body() == {"persona": PERSONA}


def test_public_sessions_need_no_api_key(twin: Twin) -> None:
    server = Server(reply(json=CREDENTIALS))
    creds = twin.run(server, lambda c: c.open_public_session(AID, "Guest"), api_key=None)
    creds2 = twin.run(server, lambda c: c.create_public_session(AID, "Guest"), api_key=None)
    assert isinstance(creds, SessionCredentials)
    assert isinstance(creds2, SessionCredentials)
    assert all("authorization" not in r.headers for r in server.requests)


def test_create_assistant_sends_description_only_when_given(twin: Twin) -> None:
    server = Server(reply(json=CREATED))
    twin.call(server, "create_assistant", "Reminder", CONFIG, description="Reminders", public=True)
    assert server.body() == {
        "name": "Reminder",
        "config": CONFIG,
        "public": True,
        "description": "Reminders",
    }


def test_create_assistant_sends_a_config_model_as_read(twin: Twin) -> None:
    model = AssistantConfig.model_validate(CONFIG)
    server = Server(reply(json=CREATED))
    twin.call(server, "create_assistant", "Reminder", model)
    sent = server.body()["config"]
    assert sent == CONFIG
    assert json.dumps(sent) == json.dumps(CONFIG)


def test_minimal_config_is_sent_minimal(twin: Twin) -> None:
    minimal = {"agent": {"instructions": "x"}}
    server = Server(reply(json={**CREATED, "config": minimal}))
    twin.call(server, "create_assistant", "Tiny", AssistantConfig.model_validate(minimal))
    assert server.body()["config"] == minimal


def test_session_sends_room_name_only_when_given(twin: Twin) -> None:
    server = Server(reply(json=CREDENTIALS))
    twin.call(server, "create_session", AID, "Ayesha", room_name="desk-1")
    assert server.body() == {"participantName": "Ayesha", "roomName": "desk-1"}


def test_tts_sends_phrase_config_id_when_given(twin: Twin) -> None:
    server = Server(reply(content=AUDIO))
    twin.call(server, "text_to_speech", "ok", "v_8eelc901", "OGG_22050_16", "prc_01")
    assert server.body() == {
        "text": "ok",
        "voiceId": "v_8eelc901",
        "outputFormat": "OGG_22050_16",
        "phraseReplacementConfigId": "prc_01",
    }


def test_phrase_replacements_from_a_mapping(twin: Twin) -> None:
    server = Server(reply(json=PRC))
    twin.call(server, "create_phrase_replacement_config", {"Dr.": "ڈاکٹر", "ok": "ٹھیک"})
    assert server.body() == {"phraseReplacements": PHRASES}


def test_path_segments_are_escaped(twin: Twin) -> None:
    server = Server(reply(json=CONTACT_LIST))
    twin.call(server, "get_contact_list", "a/b c")
    assert server.request.url.raw_path == b"/v1/contact-lists/a%2Fb%20c"


# --------------------------------------------------------------------------- extra_body


@pytest.mark.parametrize(
    ("method", "args", "named"),
    [
        ("refine", (AID, "Shorter greeting."), {"ownerFeedback": "Shorter greeting."}),
        ("create_session", (AID, "Ayesha"), {"participantName": "Ayesha"}),
        ("open_public_session", (AID, "Ayesha"), {"participantName": "Ayesha"}),
        (
            "text_to_speech",
            ("ok", "v_8eelc901", "WAV_22050_16"),
            {"text": "ok", "voiceId": "v_8eelc901", "outputFormat": "WAV_22050_16"},
        ),
        ("create_phrase_replacement_config", (PHRASES,), {"phraseReplacements": PHRASES}),
        (
            "create_assistant",
            ("Reminder", CONFIG),
            {"name": "Reminder", "config": CONFIG},
        ),
    ],
)
def test_extra_body_is_merged(
    twin: Twin, method: str, args: tuple[Any, ...], named: dict[str, Any]
) -> None:
    extra = {"brief": {"context": "Clinic", "sampleRows": [{"name": "Ayesha"}]}, "flag": True}
    answers = {
        "refine": REFINED,
        "create_phrase_replacement_config": PRC,
        "create_assistant": CREATED,
    }
    answer = (
        reply(content=AUDIO)
        if method == "text_to_speech"
        else reply(json=answers.get(method, CREDENTIALS))
    )
    server = Server(answer)
    twin.call(server, method, *args, extra_body=extra)
    assert server.body() == {**named, **extra}


def test_extra_body_on_simulate_is_merged(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    twin.run(server, lambda c: c.simulate(AID, PERSONA, extra_body={"seed": 7}).collect())
    assert server.body() == {"persona": PERSONA, "seed": 7}


@pytest.mark.parametrize(
    ("method", "args", "clash"),
    [
        ("refine", (AID, "Shorter."), "ownerFeedback"),
        ("create_session", (AID, "Ayesha"), "participantName"),
        ("text_to_speech", ("ok", "v_8eelc901", "WAV_22050_16"), "voiceId"),
        ("create_assistant", ("Reminder", CONFIG), "config"),
        ("create_phrase_replacement_config", (PHRASES,), "phraseReplacements"),
    ],
)
def test_extra_body_clash_with_a_named_argument_is_refused(
    twin: Twin, method: str, args: tuple[Any, ...], clash: str
) -> None:
    server = Server(reply(json={}))
    with pytest.raises(InvalidRequestError) as info:
        twin.call(server, method, *args, extra_body={clash: "other", "fine": 1})
    assert info.value.fields == [f"extra_body.{clash}"]
    assert server.requests == []


def test_extra_body_clash_on_simulate_is_refused(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    with pytest.raises(InvalidRequestError) as info:
        twin.run(server, lambda c: c.simulate(AID, PERSONA, extra_body={"persona": {}}))
    assert info.value.fields == ["extra_body.persona"]
    assert server.requests == []


# --------------------------------------------------------------------------- typed results


def test_list_assistants_gives_assistants_with_aliases(twin: Twin) -> None:
    unpublished = {**LISTED, "realtimeAssistantId": LID, "aliases": {"draft": ALIASES["draft"]}}
    result = twin.call(Server(reply(json=[LISTED, unpublished])), "list_assistants")
    assert [type(a) for a in result] == [Assistant, Assistant]
    first, second = result
    assert first.id == AID
    assert first.version == 5
    assert first.aliases is not None
    assert first.aliases.draft.version == 5
    assert first.aliases.prod is not None
    assert first.aliases.prod.version == 3
    assert first.aliases.draft_ahead is True
    assert second.aliases is not None
    assert second.aliases.prod is None
    assert second.aliases.draft_ahead is False
    assert isinstance(first.config, AssistantConfig)
    assert first.config.stt is not None
    assert isinstance(first.config.stt.default, VendorASttConfig)
    assert first.config.tts is not None
    assert isinstance(first.config.tts.default, ServiceAiTtsConfig)
    assert first.to_json() == LISTED


def test_list_assistants_empty(twin: Twin) -> None:
    assert twin.call(Server(reply(json=[])), "list_assistants") == []


def test_create_assistant_gives_the_created_assistant(twin: Twin) -> None:
    created = twin.call(Server(reply(201, json=CREATED)), "create_assistant", "Reminder", CONFIG)
    assert isinstance(created, Assistant)
    assert created.realtime_assistant_id == AID
    assert created.organization_id == ORG
    assert created.project_id == PRJ
    assert created.public is False
    assert created.version is None
    assert created.aliases is None
    assert created.config.to_json() == CONFIG


def test_update_assistant_gives_the_json_answer(twin: Twin) -> None:
    answer = {**CREATED, "public": True}
    assert twin.call(Server(reply(json=answer)), "update_assistant", AID, public=True) == answer


@pytest.mark.parametrize("status", [200, 204])
def test_update_assistant_accepts_a_success_without_body(twin: Twin, status: int) -> None:
    assert twin.call(Server(reply(status)), "update_assistant", AID, public=True) is None


def test_delete_assistant_gives_none(twin: Twin) -> None:
    server = Server(reply(204))
    assert twin.call(server, "delete_assistant", AID) is None
    assert server.request.content == b""


def test_metadata_has_aliases_and_no_config(twin: Twin) -> None:
    meta = twin.call(Server(reply(json=METADATA)), "get_assistant_metadata", AID)
    assert isinstance(meta, AssistantMetadata)
    assert "config" not in AssistantMetadata.model_fields
    assert meta.realtime_assistant_id == AID
    assert meta.name == "Reminder"
    assert meta.description == "Appointment reminders"
    assert meta.aliases.draft.version == 5
    assert meta.aliases.draft.updated_by == "portal:ayesha@example.com"
    assert meta.aliases.prod is None


@pytest.mark.parametrize(
    "method", ["create_session", "create_public_session", "open_public_session"]
)
def test_sessions_give_credentials(twin: Twin, method: str) -> None:
    creds = twin.call(Server(reply(json=CREDENTIALS)), method, AID, "Ayesha")
    assert isinstance(creds, SessionCredentials)
    assert creds.token == CREDENTIALS["token"]
    assert creds.ws_url == "wss://rooms.test"
    assert creds.room_name == "r_1"


def test_refine_gives_a_refine_response(twin: Twin) -> None:
    started = twin.call(Server(reply(json=REFINED)), "refine", AID, "Shorter.")
    assert isinstance(started, RefineResponse)
    assert started.build_id == REFINED["buildId"]
    assert started.assistant_id == AID
    assert started.status == "started"


@pytest.mark.parametrize("content_type", ["audio/mpeg", "application/octet-stream", None])
def test_text_to_speech_gives_bytes(twin: Twin, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    audio = twin.call(
        Server(reply(content=AUDIO, headers=headers)),
        "text_to_speech",
        "ok",
        "v_30s70t3a",
        "MP3_22050_128",
    )
    assert audio == AUDIO
    assert isinstance(audio, bytes)


def test_phrase_replacement_config_is_typed(twin: Twin) -> None:
    prc = twin.call(Server(reply(json=PRC)), "create_phrase_replacement_config", PHRASES)
    assert isinstance(prc, PhraseReplacementConfig)
    assert prc.config_id == "prc_01"
    assert [(p.phrase, p.replacement) for p in prc.phrase_replacements] == [
        ("Dr.", "ڈاکٹر"),
        ("ok", "ٹھیک"),
    ]


def test_contact_list_has_its_summary(twin: Twin) -> None:
    cl = twin.call(Server(reply(json=CONTACT_LIST)), "get_contact_list", LID)
    assert isinstance(cl, ContactList)
    assert cl.list_id == LID
    assert cl.source_kind == "csv_upload"
    assert cl.contact_count == cl.summary.will_be_called == 2
    assert cl.summary.excluded is not None
    assert cl.summary.excluded.invalid_phone == 1
    assert cl.summary.excluded.duplicate == 1
    assert cl.summary.errors is not None
    assert cl.summary.errors[0].row == 4
    assert cl.summary.errors[0].issue == "duplicate"
    assert cl.version == 1
    assert cl.to_json() == CONTACT_LIST


def test_contact_list_keeps_the_unnamed_source_reference(twin: Twin) -> None:
    with_source = {**CONTACT_LIST, "sourceKind": "google_sheets", "sheetRef": {"id": "abc"}}
    cl = twin.call(Server(reply(json=with_source)), "get_contact_list", LID)
    assert cl.to_json() == with_source


# --------------------------------------------------------------------------- simulate


def test_simulate_yields_turns_then_done(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    events = twin.run(server, lambda c: drain(c.simulate(AID, PERSONA)))
    assert events == [
        Turn(1, "agent", TURN_1["text"]),
        Turn(2, "caller", TURN_2["text"]),
        Done(
            persona_id="p_123",
            persona_label="Busy nurse",
            archetype="happy",
            path="negative",
            turns=(
                TranscriptTurn("agent", TURN_1["text"]),
                TranscriptTurn("caller", TURN_2["text"]),
            ),
        ),
    ]


def test_simulate_collect_gives_a_transcript(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    transcript = twin.run(server, lambda c: c.simulate(AID, PERSONA).collect())
    assert isinstance(transcript, Transcript)
    assert transcript.ok
    assert transcript.turns == (Turn(1, "agent", TURN_1["text"]), Turn(2, "caller", TURN_2["text"]))
    assert isinstance(transcript.outcome, Done)
    assert transcript.outcome.persona_id == "p_123"
    assert transcript.ended_by == "caller"
    assert transcript.first_turn_s is not None
    assert 0 <= transcript.first_turn_s <= transcript.duration_s


def test_simulate_without_terminal_event_raises_stream_dropped(twin: Twin) -> None:
    body = sse(("turn", TURN_1), ("turn", TURN_2))
    server = Server(reply(content=body, headers=SSE_HEADERS))
    with pytest.raises(StreamDropped) as info:
        twin.run(server, lambda c: drain(c.simulate(AID, PERSONA)))
    assert info.value.turns == [Turn(1, "agent", TURN_1["text"]), Turn(2, "caller", TURN_2["text"])]
    assert len(server.requests) == 1  # a dropped stream is never silently resumed


def test_simulate_collect_without_terminal_event_raises_stream_dropped(twin: Twin) -> None:
    body = sse(("turn", TURN_1))
    server = Server(reply(content=body, headers=SSE_HEADERS))
    with pytest.raises(StreamDropped) as info:
        twin.run(server, lambda c: c.simulate(AID, PERSONA).collect())
    assert info.value.turns == [Turn(1, "agent", TURN_1["text"])]


def test_simulate_error_event_gives_simulation_failed(twin: Twin) -> None:
    body = sse(("turn", TURN_1), ("error", {"message": "Simulation exceeded five minutes"}))
    server = Server(reply(content=body, headers=SSE_HEADERS))
    events = twin.run(server, lambda c: drain(c.simulate(AID, PERSONA)))
    assert events == [
        Turn(1, "agent", TURN_1["text"]),
        SimulationFailed("Simulation exceeded five minutes"),
    ]
    transcript = twin.run(
        Server(reply(content=body, headers=SSE_HEADERS)),
        lambda c: c.simulate(AID, PERSONA).collect(),
    )
    assert not transcript.ok
    assert transcript.outcome == SimulationFailed("Simulation exceeded five minutes")


def test_simulate_stops_at_the_terminal_event(twin: Twin) -> None:
    body = sse(("turn", TURN_1), ("done", DONE), ("turn", TURN_2))
    server = Server(reply(content=body, headers=SSE_HEADERS))
    events = twin.run(server, lambda c: drain(c.simulate(AID, PERSONA)))
    assert [type(e) for e in events] == [Turn, Done]


def test_simulate_json_400_before_streaming(twin: Twin) -> None:
    envelope = {
        "message": ["persona.behavior must be a string", "unsupported provider vendor_z"],
        "error": "Bad Request",
        "statusCode": 400,
    }
    server = Server(reply(400, json=envelope))
    with pytest.raises(BadRequestError) as info:
        twin.run(server, lambda c: drain(c.simulate(AID, PERSONA)))
    assert info.value.status_code == 400
    assert info.value.messages == envelope["message"]
    assert info.value.error == "Bad Request"
    assert len(server.requests) == 1


def test_simulate_200_that_is_not_an_event_stream(twin: Twin) -> None:
    server = Server(reply(json={"status": "ok"}))
    with pytest.raises(UnexpectedResponseError) as info:
        twin.run(server, lambda c: c.simulate(AID, PERSONA).collect())
    assert "application/json" in str(info.value)
    assert len(server.requests) == 1


def test_simulate_is_lazy(twin: Twin) -> None:
    server = Server(reply(content=SSE_DONE, headers=SSE_HEADERS))
    twin.run(server, lambda c: c.simulate(AID, PERSONA))
    assert server.requests == []
