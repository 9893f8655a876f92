"""E9 over a real socket: event order, one terminal, pings, ceiling, disconnects, faults,
fallbacks to the stored brief, and per-conversation seeds."""

from __future__ import annotations

import httpx
import pytest

from evalkit.emulator import EmulatorServer, serve
from tests.waiting import wait_until

from .helpers import BRIEF, FakeBackend, client_for, create_assistant, make_config, simulate

PERSONA = {"label": "Busy parent", "behavior": "You are in a hurry.", "path": "positive"}


def test_turns_then_exactly_one_done(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    sse = simulate(client, aid, {"persona": PERSONA, "variables": {"name": "Ayesha"}})
    assert sse.status == 200
    names = [name for name, _ in sse.events]
    assert names[-1] == "done"
    assert len(sse.terminals) == 1
    assert set(names[:-1]) == {"turn"}
    assert len(names) > 1
    turns = [data for name, data in sse.events if name == "turn"]
    assert [t["index"] for t in turns] == list(range(1, len(turns) + 1))
    assert all(t["role"] in ("agent", "caller") and isinstance(t["text"], str) for t in turns)
    done = sse.events[-1][1]
    assert set(done) == {"personaId", "personaLabel", "archetype", "path", "turns"}
    assert done["personaLabel"] == "Busy parent"
    assert done["archetype"] == "happy"
    assert done["path"] == "positive"
    assert done["turns"] == [{"speaker": t["role"], "text": t["text"]} for t in turns]


def test_path_defaults_to_negative_and_persona_ids_are_minted(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    first = simulate(client, aid, {"persona": {"label": "x"}}).events[-1][1]
    second = simulate(client, aid, {"persona": {"label": "x"}}).events[-1][1]
    assert first["path"] == "negative"
    assert first["archetype"] == "happy"
    assert first["personaId"] != second["personaId"]


def test_bad_setups_are_plain_json_400(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    for body, field in (
        ({"context": "x" * 8001}, "context"),
        ({"variables": {"k" * 65: "v"}}, "variables"),
        ({"variables": {"v": "x" * 3000}}, "variables"),
        ({"persona": "nobody"}, "persona"),
    ):
        sse = simulate(client, aid, body)
        assert sse.status == 400, body
        error = sse.events[0][1]
        assert error["error"] == "Bad Request"
        assert any(m.startswith(field) for m in error["message"]), error
    config = make_config()
    config["llm"] = {"default": {"provider": "vendor_c", "model": "llm-9000"}}
    odd = create_assistant(client, config=config)["realtimeAssistantId"]
    sse = simulate(client, odd, {})
    assert sse.status == 400
    assert any(m.startswith("config.llm.default.model") for m in sse.events[0][1]["message"])
    missing = simulate(client, "0f6f0c4e-0000-4000-8000-000000000000", {})
    assert missing.status == 404


def test_context_and_variables_fall_back_to_the_brief() -> None:
    backend = FakeBackend(turns=2)
    with serve(time_scale=0.001, seed=1, backend=backend) as emu, client_for(emu) as client:
        built = emu.build("Clinic reminder", BRIEF, "Remind {{name}} about {{slot}}.")
        simulate(client, built["realtimeAssistantId"], {"persona": PERSONA})
        simulate(client, built["realtimeAssistantId"], {"context": "own", "variables": {"a": 1}})
        plain = create_assistant(client)["realtimeAssistantId"]
        simulate(client, plain, {})
    brief_setup, explicit_setup, plain_setup = backend.setups
    assert brief_setup.context == BRIEF["context"]
    assert brief_setup.variables == BRIEF["sampleRows"][0]
    assert brief_setup.persona == PERSONA
    assert brief_setup.config["agent"]["instructions"] == "Remind {{name}} about {{slot}}."
    assert (explicit_setup.context, explicit_setup.variables) == ("own", {"a": 1})
    assert (plain_setup.context, plain_setup.variables) == (None, None)


def test_simulate_runs_the_draft_saved_now() -> None:
    backend = FakeBackend(turns=1)
    with serve(time_scale=0.001, seed=1, backend=backend) as emu, client_for(emu) as client:
        aid = create_assistant(client)["realtimeAssistantId"]
        emu.publish(aid)
        client.post(f"/realtime-assistants/{aid}", json={"config": make_config("Draft prompt.")})
        simulate(client, aid, {})
    assert backend.setups[0].config["agent"]["instructions"] == "Draft prompt."


def _seeds(order: list[int]) -> list[int]:
    backend = FakeBackend(turns=1)
    bodies = [{"persona": {"label": "a"}}, {"persona": {"label": "b"}}]
    with serve(time_scale=0.001, seed=42, backend=backend) as emu, client_for(emu) as client:
        aid = create_assistant(client)["realtimeAssistantId"]
        # the same assistant id on both runs: re-key the record under a fixed id
        rec = emu.emulator.state.assistants.pop(aid)
        rec.assistant_id = "fixed-assistant"
        emu.emulator.state.assistants["fixed-assistant"] = rec
        for i in order:
            simulate(client, "fixed-assistant", bodies[i])
    return backend.seeds


def test_seeds_differ_for_repeats_and_replay_whatever_the_order() -> None:
    forward = _seeds([0, 0, 1, 1])
    backward = _seeds([1, 0, 1, 0])
    assert len(set(forward)) == 4  # repeats of a cell get different seeds
    assert sorted(forward) == sorted(backward)  # the run replays in any arrival order
    assert forward[0] == backward[1]
    assert forward[2] == backward[0]


def test_pings_are_exactly_colon_ping() -> None:
    backend = FakeBackend(turns=3)
    with serve(time_scale=0.001, turn_delay=40, backend=backend) as emu, client_for(emu) as c:
        aid = create_assistant(c)["realtimeAssistantId"]
        sse = simulate(c, aid, {})
    comments = [line for line in sse.raw if line.startswith(":")]
    assert comments
    assert set(comments) == {": ping"}
    assert [name for name, _ in sse.events] == ["turn", "turn", "turn", "done"]


def test_five_minute_ceiling_ends_in_error() -> None:
    backend = FakeBackend(turns=None, pause=0.0)
    with serve(time_scale=0.001, turn_delay=1000, backend=backend) as emu, client_for(emu) as c:
        aid = create_assistant(c)["realtimeAssistantId"]
        sse = simulate(c, aid, {})
        wait_until(lambda: emu.stats()["active"] == 0, 10, what="no active simulation")
        stats = emu.stats()
    assert [name for name, _ in sse.events] == ["error"]
    assert "ceiling" in sse.events[0][1]["message"]
    assert stats["completed"] == 1
    assert stats["errored"] == 1


def test_client_disconnect_stops_the_conversation() -> None:
    backend = FakeBackend(turns=None, pause=0.01)
    # time_scale 0.01: a 3 s ceiling, so a loaded machine cannot end the call before the
    # test reads it (at 0.001 the 0.3 s ceiling sometimes came first)
    with serve(time_scale=0.01, backend=backend) as emu, client_for(emu) as c:
        aid = create_assistant(c)["realtimeAssistantId"]
        path = f"/realtime-assistants/builds/{aid}/simulate"
        with c.stream("POST", path, json={}) as response:
            lines = response.iter_lines()
            got = [next(lines) for _ in range(4)]
            assert got[0] == "event: turn"
            assert emu.stats()["active"] == 1
        wait_until(lambda: emu.stats()["active"] == 0, 10, what="no active simulation")
        stats = emu.stats()
        wait_until(lambda: backend.closed == 1, 10, what="the backend closed")
        # the endless conversation was stopped from outside, and a finished generator never
        # yields again: nothing more is produced for the caller who left
        assert backend.ended in (["CancelledError"], ["GeneratorExit"])
    assert stats["cancelled"] == 1
    assert stats["started"] == 1
    assert stats["completed"] == 0


@pytest.mark.parametrize(
    ("faults", "expect"),
    [
        ({"drop_rate": 1.0}, "dropped"),
        ({"error_event_rate": 1.0}, "error"),
        ({"http429_rate": 1.0}, 429),
        ({"http503_rate": 1.0}, 503),
    ],
)
def test_faults(faults: dict[str, float], expect: object) -> None:
    backend = FakeBackend(turns=8)
    with serve(time_scale=0.001, backend=backend) as emu, client_for(emu) as c:
        aid = create_assistant(c)["realtimeAssistantId"]
        assert emu.set_faults(**faults, seed=3)["seed"] == 3
        path = f"/realtime-assistants/builds/{aid}/simulate"
        if isinstance(expect, int):
            response = c.post(path, json={})
            assert response.status_code == expect
            assert response.json()["statusCode"] == expect
            if expect == 429:
                assert "retry-after" in response.headers
            assert backend.setups == []
            return
        sse = simulate(c, aid, {})
        wait_until(lambda: emu.stats()["active"] == 0, 10, what="no active simulation")
        stats = emu.stats()
        emu.set_faults()
        assert simulate(c, aid, {}).events[-1][0] == "done"  # a later PUT replaces the earlier
    turns = [e for e in sse.events if e[0] == "turn"]
    assert 1 <= len(turns) < 8  # mid-conversation
    if expect == "dropped":
        assert sse.terminals == []
        assert stats["dropped"] == 1
    else:
        assert [e[0] for e in sse.terminals] == ["error"]
        assert sse.events[-1][0] == "error"
        assert stats["errored"] == 1


def test_fault_settings_are_validated(emu: EmulatorServer) -> None:
    with client_for(emu) as c:
        url = f"{emu.admin_url}/faults"
        for body in ({"dropRate": 2}, {"dropRate": "x"}, {"bogus": 1}, {"seed": 1.5}, [1]):
            response = c.put(url, json=body)
            assert response.status_code == 400, body


def test_backend_failure_is_an_error_event() -> None:
    class Broken:
        async def conversation(self, setup: object):  # type: ignore[no-untyped-def]
            yield FakeBackend.__annotations__  # not an utterance: makes the stream fail
            raise RuntimeError("model went away")

    with serve(time_scale=0.001, backend=Broken()) as emu, client_for(emu) as c:  # type: ignore[arg-type]
        aid = create_assistant(c)["realtimeAssistantId"]
        sse = simulate(c, aid, {})
    assert len(sse.terminals) == 1
    assert sse.events[-1][0] == "error"
