"""E9 over loopback: typed events and transcripts, variables and context reaching the dialogue,
a JSON 400 before streaming, injected faults (drop, error event, 429, 503), closing a stream
early (the emulator counts it cancelled) and a stream kept alive by pings alone."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evalkit.api import (
    BadRequestError,
    Done,
    InvalidRequestError,
    RateLimitError,
    ServiceUnavailableError,
    SimulationFailed,
    StreamDeadlineExceeded,
    StreamDropped,
    Transcript,
    Turn,
)
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import (
    LLM,
    NEUTRAL,
    SEED,
    Api,
    MakeApi,
    make_config,
    new_project,
    serving,
)
from tests.waiting import wait_until

GREETING = 'Say: "Assalam o alaikum {{customer_name}}, this is Sana from the Karachi Clinic."'
SLOW_TIME_SCALE = 0.005
TURN_DELAY = 120.0
"""On the slow emulator every utterance takes 0.6 s, pings come every 0.075 s and the
five-minute ceiling falls at 1.5 s, after two turns."""


@pytest.fixture(scope="module")
def slow_emu() -> Iterator[EmulatorServer]:
    """An emulator whose turns come slowly while pings come fast (exactly 0.6 s each: no
    latency jitter, so the ceiling always falls after the second turn)."""
    with serving(
        time_scale=SLOW_TIME_SCALE, seed=SEED, turn_delay=TURN_DELAY, turn_jitter=0.0
    ) as server:
        yield server


def assert_well_formed(transcript: Transcript) -> Done:
    """Turns 1-based and in order, roles alternating, `done` holding the same transcript."""
    assert transcript.ok
    done = transcript.outcome
    assert isinstance(done, Done)
    turns = transcript.turns
    assert len(turns) >= 2
    assert [t.index for t in turns] == list(range(1, len(turns) + 1))
    assert all(isinstance(t, Turn) and t.text for t in turns)
    assert all(a.role != b.role for a, b in itertools.pairwise(turns))
    assert [(t.speaker, t.text) for t in done.turns] == [(t.role, t.text) for t in turns]
    return done


async def fault_api(make_api: MakeApi, emu: EmulatorServer, **faults: float) -> tuple[Api, str]:
    """A client of a fresh project whose simulate requests all meet ``faults``; an assistant."""
    key = new_project(emu)["apiKey"]
    api = make_api(api_key=key)
    assistant = await api.create_assistant("Faulty", make_config())
    emu.set_faults(api_key=key, seed=11, **faults)
    return api, assistant.id


def simulate_requests(api: Api) -> list[httpx.Request]:
    return [r for r in api.sent if r.url.path.endswith("/simulate")]


async def test_collect_gives_a_done_transcript(api: Api) -> None:
    created = await api.create_assistant("Rehearsal", make_config(greeting="Greet the caller."))
    persona = {"label": "Friendly Fatima", "behavior": "friendly and cooperative", "path": "alt"}
    transcript = await api.collect(created.id, persona)
    done = assert_well_formed(transcript)
    assert done.archetype == "happy"  # whatever path was sent
    assert done.path == "alt"
    assert done.persona_label == "Friendly Fatima"
    assert done.persona_id
    assert transcript.turns[0].role == "agent"  # initialGreeting: the agent speaks first
    again = await api.collect(created.id, persona)
    assert isinstance(again.outcome, Done)
    assert again.outcome.persona_id != done.persona_id


async def test_concurrent_streams_each_get_their_own_transcript(api: Api) -> None:
    created = await api.create_assistant("Busy line", make_config(greeting=GREETING))
    names = ["Zainab", "Bilal", "Omar", "Sana"]
    transcripts = await asyncio.gather(
        *(api.collect(created.id, NEUTRAL, variables={"customer_name": n}) for n in names)
    )
    for name, transcript in zip(names, transcripts, strict=True):
        assert_well_formed(transcript)
        assert transcript.turns[0].text.startswith(f"Assalam o alaikum {name},")


async def test_path_defaults_to_negative(api: Api) -> None:
    created = await api.create_assistant("Default path", make_config())
    done = assert_well_formed(await api.collect(created.id, {"label": "No path", "behavior": "x"}))
    assert done.path == "negative"
    assert done.archetype == "happy"


async def test_variables_and_context_reach_the_conversation(api: Api) -> None:
    created = await api.create_assistant("Clinic", make_config(greeting=GREETING))
    briefed = await api.collect(
        created.id,
        NEUTRAL,
        context="Zainab booked a check-up at the Karachi Clinic and expects our call.",
        variables={"customer_name": "Zainab"},
    )
    assert_well_formed(briefed)
    opening, reply = briefed.turns[0], briefed.turns[1]
    assert opening.text == "Assalam o alaikum Zainab, this is Sana from the Karachi Clinic."
    assert reply.role == "caller"
    assert "who" not in reply.text.lower()

    cold = await api.collect(created.id, NEUTRAL)  # no context, no variables: a cold call
    assert_well_formed(cold)
    assert "{{customer_name}}" in cold.turns[0].text  # an unresolved token stays visible
    assert "who" in cold.turns[1].text.lower()


async def test_simulate_runs_the_saved_draft(api: Api, emu: EmulatorServer) -> None:
    created = await api.create_assistant(
        "Draft", make_config(greeting='Say: "Hello from version one."')
    )
    emu.publish(created.id)
    await api.update_assistant(
        created.id, config=make_config(greeting='Say: "Hello from version two."')
    )
    transcript = await api.collect(created.id, NEUTRAL)
    assert transcript.turns[0].text == "Hello from version two."


async def test_stored_brief_fills_in_missing_variables_and_context(
    api: Api, emu: EmulatorServer
) -> None:
    built = emu.build(
        "Clinic reminder",
        {
            "context": "Zainab booked a check-up and expects a reminder call.",
            "sampleRows": [{"customer_name": "Zainab"}, {"customer_name": "Bilal"}],
        },
        "You remind {{customer_name}} of the check-up at the Karachi Clinic.",
        config=make_config(greeting=GREETING),
    )
    assistant_id = built["realtimeAssistantId"]
    from_brief = await api.collect(assistant_id, NEUTRAL)
    assert from_brief.turns[0].text.startswith("Assalam o alaikum Zainab,")  # first sample row
    assert "who" not in from_brief.turns[1].text.lower()  # the brief's context: expected call
    overridden = await api.collect(
        assistant_id,
        NEUTRAL,
        context="A cold call: the person is not expecting it.",
        variables={"customer_name": "Omar"},
    )
    assert overridden.turns[0].text.startswith("Assalam o alaikum Omar,")
    assert "who" in overridden.turns[1].text.lower()


async def test_unsupported_setup_is_a_json_400_before_streaming(
    api: Api, emu: EmulatorServer
) -> None:
    # an undocumented model is only a warning for the client (the service stores it) ...
    llm: dict[str, Any] = {"default": {**LLM["default"], "model": "llm-9000"}}
    config = {"agent": {"instructions": "Hi."}, "llm": llm}
    created = await api.create_assistant("Unsupported", config)
    started = emu.stats()["started"]
    # ... but a rehearsal of it fails as a plain JSON 400 before any event
    with pytest.raises(BadRequestError) as caught:
        await api.collect(created.id, NEUTRAL)
    assert caught.value.status_code == 400
    assert caught.value.error == "Bad Request"
    assert any("config.llm.default.model" in m for m in caught.value.messages)
    assert len(simulate_requests(api)) == 1  # a 400 is never retried
    assert emu.stats()["started"] == started


BAD_BODIES: dict[str, tuple[dict[str, Any], str]] = {
    "context over 8000": ({"context": "c" * 8001}, "context"),
    "variable key over 64": ({"variables": {"k" * 65: "v"}}, "variables"),
    "variables JSON of 3000": ({"variables": {"notes": "n" * 2988}}, "variables"),
}


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
async def test_bad_body_is_refused_before_sending(case: str, api: Api, emu: EmulatorServer) -> None:
    created = await api.create_assistant("Limits", make_config())
    kwargs, field = BAD_BODIES[case]
    stats = emu.stats()
    with pytest.raises(InvalidRequestError) as caught:
        await api.collect(created.id, NEUTRAL, **kwargs)
    assert all(f.startswith(field) for f in caught.value.fields), caught.value.fields
    assert simulate_requests(api) == []
    assert emu.stats() == stats


async def test_limits_themselves_are_accepted(api: Api) -> None:
    created = await api.create_assistant("At the limit", make_config())
    variables = {"k" * 64: "v" * 2928}  # a 64-character key, 2999 characters of JSON
    transcript = await api.collect(created.id, NEUTRAL, context="c" * 8000, variables=variables)
    assert transcript.ok


async def test_dropped_stream_raises_stream_dropped(make_api: MakeApi, emu: EmulatorServer) -> None:
    api, assistant_id = await fault_api(make_api, emu, drop_rate=1.0)
    dropped = emu.stats()["dropped"]
    with pytest.raises(StreamDropped) as caught:
        await api.collect(assistant_id, NEUTRAL)
    turns = caught.value.turns
    assert turns
    assert [t.index for t in turns] == list(range(1, len(turns) + 1))
    assert len(simulate_requests(api)) == 1  # no resume, no silent retry of a started stream
    assert emu.stats()["dropped"] == dropped + 1


async def test_error_event_is_a_simulation_failed_outcome(
    make_api: MakeApi, emu: EmulatorServer
) -> None:
    api, assistant_id = await fault_api(make_api, emu, error_event_rate=1.0)
    transcript = await api.collect(assistant_id, NEUTRAL)
    assert not transcript.ok
    assert isinstance(transcript.outcome, SimulationFailed)
    assert transcript.outcome.message
    assert len(simulate_requests(api)) == 1


async def test_429_raises_rate_limit_error_after_retries(
    make_api: MakeApi, emu: EmulatorServer
) -> None:
    api, assistant_id = await fault_api(make_api, emu, http429_rate=1.0)
    started = emu.stats()["started"]
    with pytest.raises(RateLimitError) as caught:
        await api.collect(assistant_id, NEUTRAL)
    assert caught.value.status_code == 429
    assert caught.value.retry_after is not None
    assert len(simulate_requests(api)) == 2  # RetryPolicy.no_wait(max_attempts=2)
    assert emu.stats()["started"] == started


async def test_503_raises_service_unavailable_after_retries(
    make_api: MakeApi, emu: EmulatorServer
) -> None:
    api, assistant_id = await fault_api(make_api, emu, http503_rate=1.0)
    with pytest.raises(ServiceUnavailableError) as caught:
        await api.collect(assistant_id, NEUTRAL)
    assert caught.value.status_code == 503
    assert len(simulate_requests(api)) == 2


async def test_closing_early_cancels_the_run(make_api: MakeApi, slow_emu: EmulatorServer) -> None:
    api = make_api(server=slow_emu)
    created = await api.create_assistant("Abandoned", make_config(greeting="Greet."))
    before = slow_emu.stats()
    events = await api.take(created.id, NEUTRAL, 1)
    assert len(events) == 1
    assert isinstance(events[0], Turn)
    after = wait_until(
        lambda: (
            (s := slow_emu.stats())["active"] == 0 and s["cancelled"] > before["cancelled"] and s
        ),
        what="the emulator to see the stream closed",
    )
    assert after["cancelled"] == before["cancelled"] + 1
    assert after["completed"] == before["completed"]


async def test_pings_keep_a_quiet_stream_alive(make_api: MakeApi, slow_emu: EmulatorServer) -> None:
    """0.6 s between turns, 0.075 s between pings, a 0.3 s read timeout: pings alone suffice."""
    short_read = httpx.Timeout(10.0, read=0.3)
    api = make_api(server=slow_emu, timeout=short_read)
    created = await api.create_assistant("Slow", make_config(greeting="Greet."))
    events = await api.take(created.id, NEUTRAL, 2)
    assert [type(e) for e in events] == [Turn, Turn]
    assert [e.index for e in events if isinstance(e, Turn)] == [1, 2]


async def test_five_minute_ceiling_ends_in_an_error_event(
    make_api: MakeApi, slow_emu: EmulatorServer
) -> None:
    api = make_api(server=slow_emu)
    created = await api.create_assistant("Long", make_config(greeting="Greet."))
    transcript = await api.collect(created.id, NEUTRAL)
    assert isinstance(transcript.outcome, SimulationFailed)
    assert transcript.outcome.message
    assert 1 <= len(transcript.turns) <= 3


async def test_client_deadline_ends_a_stream_kept_alive_by_pings(
    make_api: MakeApi, slow_emu: EmulatorServer
) -> None:
    api = make_api(server=slow_emu, stream_deadline=0.3)
    created = await api.create_assistant("Deadline", make_config(greeting="Greet."))
    cancelled = slow_emu.stats()["cancelled"]
    with pytest.raises(StreamDeadlineExceeded) as caught:
        await api.collect(created.id, NEUTRAL)
    assert caught.value.turns == []
    wait_until(
        lambda: (s := slow_emu.stats())["active"] == 0 and s["cancelled"] > cancelled,
        what="the emulator to see the stream closed",
    )
