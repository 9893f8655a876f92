"""Pre-send validation: every limit and configuration rule at its boundary, and the client's use of it.

The rules are the models' own (:mod:`evalkit.api._rules`); these call them the way the client
does before sending: :func:`check_request` on a body (its errors, else its config's warnings).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import pytest

from evalkit.api import AssistantConfig, AsyncClient, InvalidRequestError, Problem, RetryPolicy
from evalkit.api import Scorecard as ServiceScorecard
from evalkit.api._advice import config_advice
from evalkit.api._requests import (
    CreateAssistantBody,
    PhraseReplacementBody,
    RefineBody,
    SessionBody,
    SimulateBody,
    TextToSpeechBody,
    UpdateAssistantBody,
    check_context,
    check_request,
    check_variables,
    request_errors,
)
from evalkit.api._rules import variables_json_length

from .twins import BASE, KEY, run_on

check_simulate_body = partial(check_request, SimulateBody)
check_refine_body = partial(check_request, RefineBody)
check_tts_body = partial(check_request, TextToSpeechBody)
check_phrase_replacements_body = partial(check_request, PhraseReplacementBody)
check_session_body = partial(check_request, SessionBody)
check_create_assistant_body = partial(check_request, CreateAssistantBody)
check_update_assistant_body = partial(check_request, UpdateAssistantBody)


def check_scorecard(scorecard: Any) -> list[Problem]:
    return request_errors(ServiceScorecard, scorecard, at="scorecard")


def check_assistant_config(config: Any, *, rehearsal: bool = False) -> list[Problem]:
    """A config as E2 carries it: its errors, else its warnings (errors for a rehearsal)."""
    return request_errors(AssistantConfig, config, at="config") or config_advice(
        config, rehearsal=rehearsal
    )


AID = "3f1c2b9e-8a44-4c1e-9d57-0b6a1f2e7c10"
PERSONA = {"label": "Busy", "behavior": "In a hurry.", "path": "negative"}


def errors(problems: list[Problem]) -> list[str]:
    """The field paths of the error problems (warnings left out)."""
    return [p.field for p in problems if p.severity == "error"]


def config(**parts: Any) -> dict[str, Any]:
    """A valid minimal config plus ``parts``."""
    return {"agent": {"instructions": "Be brief."}, **parts}


def rules(*points: float, ids: list[str] | None = None) -> list[dict[str, Any]]:
    ids = ids or [f"r{i}" for i in range(len(points))]
    return [
        {"ruleId": i, "title": f"rule {i}", "points": p} for i, p in zip(ids, points, strict=True)
    ]


def scorecard(*points: float, ids: list[str] | None = None) -> dict[str, Any]:
    return {"rubricVersionId": "rv-1", "rules": rules(*points, ids=ids)}


# --------------------------------------------------------------------------- E9 simulate


@pytest.mark.parametrize(("length", "ok"), [(0, True), (8000, True), (8001, False)])
def test_context_length(length: int, ok: bool) -> None:
    body = {"persona": PERSONA, "context": "c" * length}
    assert errors(check_simulate_body(body)) == ([] if ok else ["context"])
    assert errors(check_context("c" * length)) == ([] if ok else ["context"])


def test_context_counts_characters_not_bytes() -> None:
    assert errors(check_context("ب" * 8000)) == []
    assert errors(check_context("ب" * 8001)) == ["context"]


def test_context_must_be_a_string() -> None:
    assert errors(check_simulate_body({"persona": PERSONA, "context": 5})) == ["context"]


@pytest.mark.parametrize(("length", "ok"), [(1, True), (64, True), (65, False)])
def test_variable_key_length(length: int, ok: bool) -> None:
    variables = {"k" * length: "v"}
    problems = errors(check_variables(variables))
    if ok:
        assert problems == []
    else:
        assert len(problems) == 1
        assert problems[0].startswith("variables.")
    problems = errors(check_simulate_body({"persona": PERSONA, "variables": variables}))
    assert (problems == []) is ok


def _variables_of_json_length(n: int) -> dict[str, Any]:
    variables = {"note": "x" * (n - len('{"note":""}'))}
    assert variables_json_length(variables) == n
    return variables


@pytest.mark.parametrize(("length", "ok"), [(2999, True), (3000, False), (3001, False)])
def test_variables_json_must_be_under_3000(length: int, ok: bool) -> None:
    variables = _variables_of_json_length(length)
    assert errors(check_variables(variables)) == ([] if ok else ["variables"])
    body = {"persona": PERSONA, "variables": variables}
    assert errors(check_simulate_body(body)) == ([] if ok else ["variables"])


def test_variables_json_length_is_compact_and_counts_characters() -> None:
    assert variables_json_length({"a": 1, "b": [1, 2]}) == len('{"a":1,"b":[1,2]}')
    assert variables_json_length({"نام": "عائشہ"}) == len('{"نام":"عائشہ"}')


@pytest.mark.parametrize("bad", [["a"], "a=1", 3])
def test_variables_must_be_an_object(bad: Any) -> None:
    assert errors(check_simulate_body({"persona": PERSONA, "variables": bad})) == ["variables"]


def test_persona_fields_must_be_strings() -> None:
    body = {"persona": {"label": 1, "behavior": None, "path": []}}  # null: absent
    assert errors(check_simulate_body(body)) == ["persona.label", "persona.path"]
    assert errors(check_simulate_body({"persona": "busy"})) == ["persona"]


# --------------------------------------------------------------------------- E10 refine


@pytest.mark.parametrize(("length", "ok"), [(0, True), (2000, True), (2001, False)])
def test_owner_feedback_length(length: int, ok: bool) -> None:
    problems = errors(check_refine_body({"ownerFeedback": "f" * length}))
    assert problems == ([] if ok else ["ownerFeedback"])


@pytest.mark.parametrize("bad", [None, 12, ["shorter"], {"text": "x"}])
def test_owner_feedback_must_be_a_string(bad: Any) -> None:
    assert errors(check_refine_body({"ownerFeedback": bad})) == ["ownerFeedback"]


def test_owner_feedback_is_required() -> None:
    assert errors(check_refine_body({})) == ["ownerFeedback"]


# --------------------------------------------------------------------------- E11 / E12 synthesis


def tts(**overrides: Any) -> dict[str, Any]:
    return {"text": "ok", "voiceId": "v_8eelc901", "outputFormat": "MP3_22050_32", **overrides}


@pytest.mark.parametrize(("length", "ok"), [(2500, True), (2501, False)])
def test_tts_text_length(length: int, ok: bool) -> None:
    assert errors(check_tts_body(tts(text="ا" * length))) == ([] if ok else ["text"])


@pytest.mark.parametrize("voice", ["v_8eelc901", "v_kwmp7zxt", "v_yypgzenx", "v_30s70t3a"])
def test_tts_voice_ids_accepted(voice: str) -> None:
    assert errors(check_tts_body(tts(voiceId=voice))) == []


@pytest.mark.parametrize(
    "fmt",
    [
        "PCM_22050_16",
        "WAV_22050_16",
        "WAV_22050_32",
        "MP3_22050_32",
        "MP3_22050_64",
        "MP3_22050_128",
        "OGG_22050_16",
        "ULAW_8000_8",
    ],
)
def test_tts_output_formats_accepted(fmt: str) -> None:
    assert errors(check_tts_body(tts(outputFormat=fmt))) == []


def test_tts_enums_reject_unknown_values() -> None:
    assert errors(check_tts_body(tts(voiceId="alloy"))) == ["voiceId"]
    assert errors(check_tts_body(tts(outputFormat="mp3"))) == ["outputFormat"]
    assert errors(check_tts_body(tts(voiceId="V_8EELC901", outputFormat="MP3_44100_32"))) == [
        "voiceId",
        "outputFormat",
    ]


def _phrases(n: int) -> dict[str, Any]:
    return {"phraseReplacements": [{"phrase": f"p{i}", "replacement": f"r{i}"} for i in range(n)]}


@pytest.mark.parametrize(("n", "ok"), [(0, True), (1000, True), (1001, False)])
def test_phrase_replacement_count(n: int, ok: bool) -> None:
    assert errors(check_phrase_replacements_body(_phrases(n))) == (
        [] if ok else ["phraseReplacements"]
    )


def test_phrase_replacement_items_are_checked() -> None:
    body = {"phraseReplacements": [{"phrase": "a"}, {"phrase": 1, "replacement": "b"}, "x"]}
    assert errors(check_phrase_replacements_body(body)) == [
        "phraseReplacements[0].replacement",
        "phraseReplacements[1].phrase",
        "phraseReplacements[2]",
    ]


# --------------------------------------------------------------------------- scorecard


@pytest.mark.parametrize("bad", ["rubric", 100, ["rules"]])
def test_scorecard_must_be_an_object(bad: Any) -> None:
    problems = check_assistant_config(config(grading={"scorecard": bad}))
    assert errors(problems) == ["config.grading.scorecard"]


def test_scorecard_needs_a_rule() -> None:
    problems = check_assistant_config(config(grading={"scorecard": scorecard()}))
    assert errors(problems) == ["config.grading.scorecard.rules"]


def test_scorecard_rule_ids_unique() -> None:
    sc = scorecard(50, 30, 20, ids=["greets", "confirms", "greets"])
    problems = check_assistant_config(config(grading={"scorecard": sc}))
    assert errors(problems) == ["config.grading.scorecard.rules[2].ruleId"]
    assert "greets" in next(p.message for p in problems if p.severity == "error")


@pytest.mark.parametrize(("points", "ok"), [((50, 49), False), ((50, 50), True), ((50, 51), False)])
def test_scorecard_points_total_exactly_100(points: tuple[int, int], ok: bool) -> None:
    problems = check_assistant_config(config(grading={"scorecard": scorecard(*points)}))
    assert errors(problems) == ([] if ok else ["config.grading.scorecard.rules"])
    assert errors(check_scorecard(scorecard(*points))) == ([] if ok else ["scorecard.rules"])


@pytest.mark.parametrize(
    "points",
    [(33.3, 33.3, 33.4), (0.1,) * 1000, (12.5,) * 8, (99.5, 0.5), (100.0,)],
)
def test_scorecard_float_points_summing_to_100(points: tuple[float, ...]) -> None:
    assert errors(check_scorecard(scorecard(*points))) == []


def test_scorecard_float_points_not_summing_to_100() -> None:
    assert errors(check_scorecard(scorecard(33.3, 33.3, 33.3))) == ["scorecard.rules"]


def test_scorecard_rule_fields() -> None:
    sc = {"rubricVersionId": "", "rules": [{"ruleId": "", "title": "t", "points": "50"}, {}]}
    assert errors(check_scorecard(sc)) == [
        "scorecard.rubricVersionId",
        "scorecard.rules[0].ruleId",
        "scorecard.rules[0].points",
        "scorecard.rules[1].ruleId",
        "scorecard.rules[1].title",
        "scorecard.rules[1].points",
    ]


# --------------------------------------------------------------------------- noise, background


def test_noise_cancellation_enabled_required() -> None:
    problems = check_assistant_config(config(noiseCancellation={"model": "nc_l"}))
    assert errors(problems) == ["config.noiseCancellation.enabled"]


@pytest.mark.parametrize("model", ["nc_vf_s", "nc_vf_l", "nc_l"])
def test_noise_cancellation_models_accepted(model: str) -> None:
    nc = {"enabled": True, "model": model, "level": 0.1}
    assert errors(check_assistant_config(config(noiseCancellation=nc))) == []


def test_noise_cancellation_unknown_model() -> None:
    nc = {"enabled": True, "model": "nc_xl"}
    assert errors(check_assistant_config(config(noiseCancellation=nc))) == [
        "config.noiseCancellation.model"
    ]


def test_noise_cancellation_enabled_must_be_boolean() -> None:
    nc = {"enabled": "true"}
    assert errors(check_assistant_config(config(noiseCancellation=nc))) == [
        "config.noiseCancellation.enabled"
    ]


def test_background_noise_enabled_required() -> None:
    assert errors(check_assistant_config(config(backgroundNoise={"sound": "office"}))) == [
        "config.backgroundNoise.enabled"
    ]
    assert errors(check_assistant_config(config(backgroundNoise={"enabled": False}))) == []


# --------------------------------------------------------------------------- stt / tts / llm blocks


@pytest.mark.parametrize(
    ("block", "default"),
    [
        ("stt", {"provider": "vendor_b"}),
        ("tts", {"provider": "serviceai", "voiceId": "v_8eelc901"}),
        ("llm", {"provider": "vendor_c", "model": "llm-5.4-mini"}),
    ],
)
def test_provider_blocks_need_default_and_nothing_else(block: str, default: dict[str, Any]) -> None:
    assert errors(check_assistant_config(config(**{block: {"default": default}}))) == []
    assert errors(check_assistant_config(config(**{block: {}}))) == [f"config.{block}.default"]
    assert errors(check_assistant_config(config(**{block: {"primary": default}}))) == [
        f"config.{block}.default",
        f"config.{block}.primary",
    ]
    assert errors(
        check_assistant_config(config(**{block: {"default": default, "fallback": default}}))
    ) == [f"config.{block}.fallback"]


def test_llm_needs_provider_and_model() -> None:
    assert errors(check_assistant_config(config(llm={"default": {}}))) == [
        "config.llm.default.provider",
        "config.llm.default.model",
    ]
    assert errors(check_assistant_config(config(llm={"default": {"provider": "vendor_e"}}))) == [
        "config.llm.default.model"
    ]
    assert errors(check_assistant_config(config(llm={"default": {"model": "llm-oss-120b"}}))) == [
        "config.llm.default.provider"
    ]


def test_stt_and_tts_need_a_provider() -> None:
    assert errors(check_assistant_config(config(stt={"default": {"model": "nv-3"}}))) == [
        "config.stt.default.provider"
    ]
    assert errors(check_assistant_config(config(tts={"default": {"voiceId": "alloy"}}))) == [
        "config.tts.default.provider"
    ]


@pytest.mark.parametrize(
    ("budget", "ok"), [(-2, False), (-1, True), (0, True), (24576, True), (24577, False)]
)
def test_thinking_budget_range(budget: int, ok: bool) -> None:
    llm = {"default": {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingBudget": budget}}
    problems = check_assistant_config(config(llm=llm))
    assert errors(problems) == ([] if ok else ["config.llm.default.thinkingBudget"])
    assert [p for p in problems if p.severity == "warning"] == []


def test_thinking_budget_must_be_an_integer() -> None:
    llm = {"default": {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingBudget": 1.5}}
    assert errors(check_assistant_config(config(llm=llm))) == ["config.llm.default.thinkingBudget"]


def test_knobs_a_provider_ignores_are_warnings_not_errors() -> None:
    llm = {"default": {"provider": "vendor_e", "model": "llm-oss-120b", "verbosity": "low"}}
    problems = check_assistant_config(config(llm=llm))
    assert errors(problems) == []
    assert [p.field for p in problems if p.severity == "warning"] == [
        "config.llm.default.verbosity"
    ]


# --------------------------------------------------------------------------- tools


def tool(**overrides: Any) -> dict[str, Any]:
    return {
        "name": "book",
        "description": "Books a slot",
        "parameters": {"type": "object", "properties": {}},
        **overrides,
    }


def test_tool_endpoint_without_connection_id_is_a_warning() -> None:
    """The spec: connectionId is not checked on create; a missing one fails the tool's calls."""
    t = tool(execution={"type": "tool_endpoint"})
    problems = check_assistant_config(config(agent={"instructions": "x", "tools": [t]}))
    assert errors(problems) == []
    assert [(p.field, p.severity) for p in problems] == [
        ("config.agent.tools[0].execution.connectionId", "warning")
    ]
    t = tool(execution={"type": "tool_endpoint", "connectionId": "te_1"})
    assert check_assistant_config(config(agent={"instructions": "x", "tools": [t]})) == []


def test_provider_rejections_are_errors_only_for_a_rehearsal() -> None:
    """An unsupported provider is stored by a save and fails E9 with a 400 before streaming."""
    cfg = config(llm={"default": {"provider": "vendor_z", "model": "m"}})
    assert errors(check_assistant_config(cfg)) == []
    assert errors(check_assistant_config(cfg, rehearsal=True)) == ["config.llm.default.provider"]
    cfg = config(
        llm={
            "default": {"provider": "vendor_e", "model": "llm-oss-120b", "reasoningEffort": "none"}
        }
    )
    assert errors(check_assistant_config(cfg)) == []
    assert errors(check_assistant_config(cfg, rehearsal=True)) == [
        "config.llm.default.reasoningEffort"
    ]


def test_client_rpc_needs_no_connection_id() -> None:
    tools = [tool(execution={"type": "client_rpc"}), tool()]
    assert errors(check_assistant_config(config(agent={"instructions": "x", "tools": tools}))) == []


def test_tool_fields() -> None:
    bad = {"name": "", "description": "", "timeout": -1, "execution": {"type": "lambda"}}
    assert errors(
        check_assistant_config(config(agent={"instructions": "x", "tools": [tool(), bad]}))
    ) == [
        "config.agent.tools[1].name",
        "config.agent.tools[1].description",
        "config.agent.tools[1].parameters",
        "config.agent.tools[1].timeout",
        "config.agent.tools[1].execution.type",
    ]


def test_agent_and_instructions_required() -> None:
    assert errors(check_assistant_config({})) == ["config.agent"]
    assert errors(check_assistant_config({"agent": {"instructions": ""}})) == [
        "config.agent.instructions"
    ]


# --------------------------------------------------------------------------- session


@pytest.mark.parametrize(("length", "ok"), [(0, True), (32, True), (33, False)])
def test_room_prefix_length(length: int, ok: bool) -> None:
    problems = check_assistant_config(config(session={"roomPrefix": "p" * length}))
    assert errors(problems) == ([] if ok else ["config.session.roomPrefix"])


@pytest.mark.parametrize(
    ("ttl", "ok"),
    [
        (0, False),
        (1, True),
        (600, True),
        (-5, False),
        (1.5, False),
        ("600", False),
        (None, True),  # null: absent
        (600.0, True),  # JSON has one number type
        (True, False),
    ],
)
def test_session_ttl(ttl: Any, ok: bool) -> None:
    problems = check_assistant_config(config(session={"ttl": ttl}))
    assert errors(problems) == ([] if ok else ["config.session.ttl"])


# --------------------------------------------------------------------------- sessions (E6–E8)


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"participantName": "Ayesha"}, []),
        ({"participantName": "A", "roomName": "lobby"}, []),
        ({"participantName": ""}, ["participantName"]),
        ({"participantName": 7}, ["participantName"]),
        ({}, ["participantName"]),
        ({"participantName": "A", "roomName": 3}, ["roomName"]),
    ],
)
def test_session_body(body: dict[str, Any], fields: list[str]) -> None:
    assert errors(check_session_body(body)) == fields


# --------------------------------------------------------------------------- E2 / E3 bodies


def test_create_assistant_body() -> None:
    assert errors(check_create_assistant_body({"name": "n", "config": config()})) == []
    assert errors(check_create_assistant_body({"name": "", "public": "yes"})) == [
        "name",
        "public",
        "config",
    ]


def test_update_assistant_body_checks_only_what_it_carries() -> None:
    assert errors(check_update_assistant_body({"public": True})) == []
    assert errors(check_update_assistant_body({"public": 1})) == ["public"]
    assert errors(check_update_assistant_body({"config": {"agent": {}}})) == [
        "config.agent.instructions"
    ]


def test_every_problem_is_reported_at_once() -> None:
    bad = {
        "agent": {"instructions": "x", "tools": [tool(execution={"type": "tool_endpoint"})]},
        "grading": {"scorecard": scorecard(60, 60, ids=["a", "a"])},
        "noiseCancellation": {"model": "nc_zz"},
        "backgroundNoise": {},
        "session": {"ttl": 0, "roomPrefix": "p" * 40},
        "stt": {"default": {"provider": "vendor_a"}, "other": {}},
        "llm": {"default": {"provider": "vendor_f", "thinkingBudget": 99999}},
    }
    assert errors(check_assistant_config(bad)) == [
        "config.grading.scorecard.rules[1].ruleId",
        "config.grading.scorecard.rules",
        "config.noiseCancellation.enabled",
        "config.noiseCancellation.model",
        "config.backgroundNoise.enabled",
        "config.session.ttl",
        "config.session.roomPrefix",
        "config.stt.other",
        "config.llm.default.model",
        "config.llm.default.thinkingBudget",
    ]


def test_problem_str_names_the_field() -> None:
    [problem] = check_refine_body({"ownerFeedback": "f" * 2001})
    assert str(problem).startswith("ownerFeedback: ")
    assert "2000" in str(problem)


# --------------------------------------------------------------------------- the client refuses


CREDENTIALS = {"token": "t", "wsUrl": "wss://rooms.test", "roomName": "r"}
SSE_DONE = (
    b'event: done\ndata: {"personaId":"p","personaLabel":"Busy","archetype":"happy",'
    b'"path":"negative","turns":[]}\n\n'
)


class Recorder:
    """A MockTransport handler: records requests and gives each operation a valid answer."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path = request.url.path
        if path.endswith("/simulate"):
            return httpx.Response(
                200, content=SSE_DONE, headers={"content-type": "text/event-stream"}
            )
        if path.endswith("/refine"):
            return httpx.Response(
                200, json={"buildId": "b", "assistantId": AID, "status": "started"}
            )
        if path.endswith("/text-to-speech"):
            return httpx.Response(200, content=b"RIFF")
        if path.endswith("/phrase-replacement-config"):
            sent = json.loads(request.content)["phraseReplacements"]
            return httpx.Response(201, json={"configId": "c", "phraseReplacements": sent})
        if path.endswith(("Session", "public-session")):
            return httpx.Response(201, json=CREDENTIALS)
        sent = json.loads(request.content)
        return httpx.Response(201, json={"realtimeAssistantId": AID, **sent})


@dataclass
class Twin:
    kind: str

    def run(self, handler: Recorder, fn: Callable[[Any], Any]) -> Any:
        transport = httpx.MockTransport(handler)
        return run_on(self.kind, fn, BASE, KEY, transport=transport, retry=RetryPolicy.no_wait())


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin(request.param)


BAD_CONFIG = {
    "agent": {"instructions": ""},
    "grading": {"scorecard": scorecard(50, 49)},
    "session": {"roomPrefix": "p" * 33},
}

REFUSED: list[tuple[str, Callable[[Any], Any], list[str]]] = [
    (
        "create_assistant",
        lambda c: c.create_assistant("", BAD_CONFIG),
        [
            "name",
            "config.agent.instructions",
            "config.grading.scorecard.rules",
            "config.session.roomPrefix",
        ],
    ),
    (
        "update_assistant",
        lambda c: c.update_assistant(AID, public="yes", config={"agent": {}}),
        ["public", "config.agent.instructions"],
    ),
    (
        "simulate",
        lambda c: c.simulate(AID, PERSONA, context="c" * 8001, variables={"k" * 65: "v" * 3000}),
        ["context", "variables.kkkkkkkkkkkkkkkkkkkk…", "variables"],
    ),
    ("refine", lambda c: c.refine(AID, "f" * 2001), ["ownerFeedback"]),
    ("refine_not_a_string", lambda c: c.refine(AID, 42), ["ownerFeedback"]),
    ("create_session", lambda c: c.create_session(AID, ""), ["participantName"]),
    ("create_public_session", lambda c: c.create_public_session(AID, ""), ["participantName"]),
    (
        "open_public_session",
        lambda c: c.open_public_session(AID, "", 5),
        ["participantName", "roomName"],
    ),
    (
        "text_to_speech",
        lambda c: c.text_to_speech("t" * 2501, "alloy", "mp3"),
        ["text", "voiceId", "outputFormat"],
    ),
    (
        "create_phrase_replacement_config",
        lambda c: c.create_phrase_replacement_config(_phrases(1001)["phraseReplacements"]),
        ["phraseReplacements"],
    ),
    ("empty_assistant_id", lambda c: c.delete_assistant(""), ["assistant_id"]),
    ("empty_list_id", lambda c: c.get_contact_list(""), ["list_id"]),
]


@pytest.mark.parametrize(("name", "call", "fields"), REFUSED, ids=[r[0] for r in REFUSED])
def test_client_refuses_before_sending(
    twin: Twin, name: str, call: Callable[[Any], Any], fields: list[str]
) -> None:
    recorder = Recorder()
    with pytest.raises(InvalidRequestError) as info:
        twin.run(recorder, call)
    assert recorder.requests == []
    assert info.value.fields == fields
    message = str(info.value)
    assert "nothing was sent" in message
    for field in fields:
        assert field in message


def test_invalid_request_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="ownerFeedback"):
        Twin("sync").run(Recorder(), lambda c: c.refine(AID, "f" * 2001))


def test_client_sends_a_config_with_only_warnings(
    twin: Twin, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = config(tts={"default": {"provider": "serviceai"}})  # no voiceId: stored, fails later
    recorder = Recorder()
    with caplog.at_level(logging.WARNING, logger="evalkit.api"):
        twin.run(recorder, lambda c: c.create_assistant("n", cfg))
    assert len(recorder.requests) == 1
    assert json.loads(recorder.requests[0].content)["config"] == cfg
    assert "config.tts.default.voiceId" in caplog.text


def test_boundaries_are_accepted_by_the_client(twin: Twin) -> None:
    recorder = Recorder()
    at_limits = config(
        grading={"scorecard": scorecard(33.3, 33.3, 33.4)},
        session={"ttl": 1, "roomPrefix": "p" * 32},
        llm={
            "default": {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingBudget": 24576}
        },
    )
    variables = {"k" * 64: "v", **_variables_of_json_length(2999 - len('"' + "k" * 64 + '":"v",'))}
    assert variables_json_length(variables) == 2999

    async def acalls(c: Any) -> None:
        await c.refine(AID, "f" * 2000)
        await c.text_to_speech("t" * 2500, "v_yypgzenx", "ULAW_8000_8")
        await c.create_phrase_replacement_config(_phrases(1000)["phraseReplacements"])
        await c.create_session(AID, "A")
        await c.create_assistant("n", at_limits)
        await c.simulate(AID, PERSONA, context="c" * 8000, variables=variables).collect()

    def calls(c: Any) -> Any:
        if isinstance(c, AsyncClient):
            return acalls(c)
        c.refine(AID, "f" * 2000)
        c.text_to_speech("t" * 2500, "v_yypgzenx", "ULAW_8000_8")
        c.create_phrase_replacement_config(_phrases(1000)["phraseReplacements"])
        c.create_session(AID, "A")
        c.create_assistant("n", at_limits)
        c.simulate(AID, PERSONA, context="c" * 8000, variables=variables).collect()
        return None

    twin.run(recorder, calls)
    assert len(recorder.requests) == 6


def test_client_refuses_non_finite_numbers_in_variables(twin: Twin) -> None:
    recorder = Recorder()
    with pytest.raises(InvalidRequestError) as info:
        twin.run(
            recorder,
            lambda c: c.simulate(AID, PERSONA, variables={"age": float("nan")}).collect(),
        )
    assert recorder.requests == []
    assert all(f.startswith("variables") for f in info.value.fields)


def test_client_refuses_non_string_variable_keys(twin: Twin) -> None:
    recorder = Recorder()
    with pytest.raises(InvalidRequestError) as info:
        twin.run(recorder, lambda c: c.simulate(AID, PERSONA, variables={1: "a"}))
    assert recorder.requests == []
    assert info.value.fields[0].startswith("variables")


# --------------------------------------------------------------------------- rules check requests only


def test_a_response_breaking_the_rules_is_still_read() -> None:
    """The rules check what is sent; what the service answers is read as it is (an old
    scorecard, a new enum value), so an assistant never becomes unreadable."""
    odd = {
        "agent": {"instructions": "", "tools": [tool(name="", execution={"type": "webhook"})]},
        "grading": {"scorecard": scorecard(50, ids=["a"])},
        "noiseCancellation": {"enabled": True, "model": "nc_future"},
        "session": {"ttl": 0, "roomPrefix": "p" * 40},
        "stt": {"default": {"provider": "vendor_b"}, "fallback": {"provider": "vendor_a"}},
    }
    assert AssistantConfig.model_validate(odd).to_json() == odd
    assert len(errors(check_assistant_config(odd))) == 8


def test_the_same_rules_put_the_limits_in_the_document() -> None:
    schema = AssistantConfig.model_json_schema()
    defs = schema["$defs"]
    assert defs["ToolExecution"]["properties"]["type"]["enum"] == ["client_rpc", "tool_endpoint"]
    assert defs["SttBlock"]["additionalProperties"] == {"not": {}}
    assert defs["AgentConfig"]["properties"]["instructions"]["minLength"] == 1
    llm = defs["LlmConfig"]["properties"]["thinkingBudget"]["anyOf"][0]
    assert (llm["minimum"], llm["maximum"]) == (-1, 24576)


@pytest.mark.parametrize(
    ("llm", "warned"),
    [
        ({"provider": "vendor_c", "model": "llm-5.4-mini", "reasoningEffort": "low"}, []),
        (
            {"provider": "vendor_c", "model": "llm-4o-mini", "reasoningEffort": "low"},
            ["reasoningEffort"],
        ),
        ({"provider": "vendor_e", "model": "llm-oss-120b", "reasoningEffort": "high"}, []),
        ({"provider": "vendor_f", "model": "gem-3.5-flash", "thinkingLevel": "high"}, []),
        (
            {"provider": "vendor_f", "model": "gem-2.5-flash", "thinkingLevel": "high"},
            ["thinkingLevel"],
        ),
        (
            {"provider": "vendor_d", "model": "vendor_c/llm-oss-20b", "verbosity": "low"},
            ["verbosity"],
        ),
    ],
)
def test_a_knob_the_model_ignores_is_a_warning(llm: dict[str, Any], warned: list[str]) -> None:
    """The spec's knob table (LLM_KNOBS): a knob is taken by some providers' models only."""
    problems = check_assistant_config(config(llm={"default": llm}))
    assert errors(problems) == []
    assert [p.field.rsplit(".", 1)[1] for p in problems] == warned
    assert all("is ignored: only" in p.message for p in problems)
