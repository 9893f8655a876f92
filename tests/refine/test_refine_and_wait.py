"""refine_and_wait over loopback: edits a build overwrote are listed and re-applied, a second
refine while one is in flight is refused, a timeout leaves the build recorded and nothing
half-written, hand-made and unknown assistants are refused clearly."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from evalkit import AsyncClient, Client
from evalkit.demo import DRAFT_INSTRUCTIONS, GREETING
from evalkit.emulator import EmulatorServer, serve
from evalkit.refine import (
    BuildInFlightError,
    InFlightLedger,
    PollPolicy,
    RefineError,
    RefineOptions,
    RefineResult,
    RefineTimeout,
    arefine_and_wait,
    refine_and_wait,
)
from evalkit.targets import SnapshotStore
from tests.refine.conftest import FAST_POLL, NASTALIQ_FEEDBACK, Demo, make_demo
from tests.waiting import wait_until


def _config(client: Client, assistant_id: str) -> dict[str, object]:
    (found,) = [a for a in client.list_assistants() if a.id == assistant_id]
    return found.config.to_json()


def test_overwritten_edits_are_listed_and_can_be_reapplied(client: Client, demo: Demo) -> None:
    result = refine_and_wait(
        demo.assistant_id,
        NASTALIQ_FEEDBACK,
        client=client,
        store=demo.store,
        options=RefineOptions(poll=FAST_POLL),
    )
    assert (result.before.version, result.after.version) == (2, 3)
    assert result.after.instructions.startswith(DRAFT_INSTRUCTIONS)
    assert NASTALIQ_FEEDBACK in result.after.instructions
    assert f"+{NASTALIQ_FEEDBACK}" in result.prompt_diff.splitlines()
    # the build regenerated the config from the brief: the hand-written greeting is gone
    assert result.overwritten_paths == ["agent.greetingInstructions"]
    (edit,) = result.overwritten
    assert (edit.before, edit.before_present, edit.after_present) == (GREETING, True, False)
    assert "greetingInstructions" not in _config(client, demo.assistant_id)["agent"]  # type: ignore[operator]
    # snapshots of both versions recorded; the in-flight record cleared
    assert SnapshotStore(demo.store).versions(demo.assistant_id) == [1, 2, 3]
    assert InFlightLedger(demo.store).read(demo.assistant_id) is None

    with pytest.raises(ValueError, match="not overwritten"):
        result.reapply(["llm.default.model"])
    result.reapply(["agent.greetingInstructions"])
    agent = _config(client, demo.assistant_id)["agent"]
    assert agent["greetingInstructions"] == GREETING  # type: ignore[index]
    assert agent["instructions"] == result.after.instructions  # type: ignore[index]


def test_a_second_refine_while_one_is_in_flight_is_refused(tmp_path: Path) -> None:
    # builds of 2.4 s here, so the refusal is checked while the first is surely in flight
    with (
        serve(port=0, time_scale=0.02, seed=7) as slow_emu,
        Client(slow_emu.base_url, slow_emu.api_key) as client,
    ):
        demo = make_demo(slow_emu, client, tmp_path / "runs")
        first: dict[str, RefineResult] = {}

        def run_first() -> None:
            first["result"] = refine_and_wait(
                demo.assistant_id,
                "Speak slowly.",
                client=client,
                store=demo.store,
                options=RefineOptions(poll=FAST_POLL),
            )

        thread = threading.Thread(target=run_first)
        thread.start()
        ledger = InFlightLedger(demo.store)
        record = wait_until(
            lambda: (found := ledger.read(demo.assistant_id)) and found.build_id and found,
            10,
            what="the first build recorded",
            interval=0.005,
        )
        with pytest.raises(BuildInFlightError) as caught:
            refine_and_wait(demo.assistant_id, "Be brief.", client=client, store=demo.store)
        thread.join(20)
        assert slow_emu.build_status(record.build_id)["status"] == "succeeded"
    message = str(caught.value)
    assert record.build_id in message
    assert record.started_at in message
    assert "in flight" in message
    assert "wait_for_inflight=True" in message
    result = first["result"]
    assert "Speak slowly." in result.after.instructions
    assert "Be brief." not in result.after.instructions
    assert result.after.version == result.before.version + 1


def test_a_timeout_leaves_the_build_recorded_and_nothing_half_written(tmp_path: Path) -> None:
    # builds of 2.4 s here, so the refusal is checked while the first is surely in flight
    # (at the module's 0.24 s a loaded machine finished the build between check and call)
    with (
        serve(port=0, time_scale=0.02, seed=7) as emu,
        Client(emu.base_url, emu.api_key) as client,
    ):
        demo = make_demo(emu, client, tmp_path / "runs")
        _timeout_leaves_the_build_recorded(client, emu, demo)


def _timeout_leaves_the_build_recorded(client: Client, emu: EmulatorServer, demo: Demo) -> None:
    hasty = PollPolicy(interval=0.001, backoff=1.0, max_interval=0.001, timeout=0.01)
    with pytest.raises(RefineTimeout) as caught:
        refine_and_wait(
            demo.assistant_id,
            NASTALIQ_FEEDBACK,
            client=client,
            store=demo.store,
            options=RefineOptions(poll=hasty),
        )
    build_id = caught.value.build_id
    assert build_id in str(caught.value)
    refine_dir = demo.store / ".refine"
    record = json.loads((refine_dir / f"{demo.assistant_id}.json").read_text(encoding="utf-8"))
    assert (record["build_id"], record["version_before"]) == (build_id, 2)
    assert not list(refine_dir.glob(".*.tmp"))  # no temp file left behind
    assert SnapshotStore(demo.store).versions(demo.assistant_id) == [1, 2]  # no "after"

    # the next call finds it: refused while it is in flight ...
    assert emu.build_status(build_id)["status"] not in ("succeeded", "failed")
    with pytest.raises(BuildInFlightError, match=build_id):
        refine_and_wait(demo.assistant_id, "Be brief.", client=client, store=demo.store)
    # ... or waited for on request, and then its own build runs
    result = refine_and_wait(
        demo.assistant_id,
        "Be brief.",
        client=client,
        store=demo.store,
        options=RefineOptions(poll=FAST_POLL, wait_for_inflight=True),
    )
    assert emu.build_status(build_id)["status"] == "succeeded"
    assert result.before.version == 3
    assert result.after.version == 4
    assert NASTALIQ_FEEDBACK in result.after.instructions
    assert InFlightLedger(demo.store).read(demo.assistant_id) is None


def test_a_recorded_build_that_finished_is_cleared_on_the_next_call(
    client: Client, emu: EmulatorServer, demo: Demo
) -> None:
    hasty = PollPolicy(interval=0.001, backoff=1.0, max_interval=0.001, timeout=0.005)
    with pytest.raises(RefineTimeout) as caught:
        refine_and_wait(
            demo.assistant_id,
            "Speak slowly.",
            client=client,
            store=demo.store,
            options=RefineOptions(poll=hasty),
        )
    build_id = caught.value.build_id
    wait_until(
        lambda: emu.build_status(build_id)["status"] == "succeeded",
        10,
        what=f"build {build_id} to succeed",
        interval=0.02,
    )
    result = refine_and_wait(
        demo.assistant_id,
        "Be brief.",
        client=client,
        store=demo.store,
        options=RefineOptions(poll=FAST_POLL),
    )
    assert result.before.version == 3


def test_hand_made_assistants_cannot_be_refined(client: Client, tmp_path: Path) -> None:
    made = client.create_assistant(
        "Hand made",
        {
            "agent": {"instructions": "Hello."},
            "llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}},
        },
    )
    with pytest.raises(RefineError, match="only built assistants") as caught:
        refine_and_wait(
            made.id,
            "Be brief.",
            client=client,
            store=tmp_path,
            options=RefineOptions(poll=FAST_POLL),
        )
    assert "no build artifacts" in str(caught.value)
    assert InFlightLedger(tmp_path).read(made.id) is None  # the claim was undone


def test_unknown_assistants_are_refused_before_sending(client: Client, tmp_path: Path) -> None:
    with pytest.raises(RefineError, match="not among"):
        refine_and_wait("00000000-0000-0000-0000-000000000000", "x", client=client, store=tmp_path)


def test_async_twin_uses_the_injected_sleep(emu: EmulatorServer, demo: Demo) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(seconds)

    async def main() -> None:
        async with AsyncClient(emu.base_url, emu.api_key) as aclient:
            policy = PollPolicy(interval=0.01, backoff=2.0, max_interval=0.04, timeout=20.0)
            result = await arefine_and_wait(
                demo.assistant_id,
                "Be brief.",
                client=aclient,
                store=demo.store,
                options=RefineOptions(poll=policy, sleep=sleep),
            )
            assert result.polls == len(slept) + 1
            assert result.after.version == 3

    asyncio.run(main())
    assert slept[:3] == [0.01, 0.02, 0.04]
    assert max(slept) == 0.04
