"""The batch runner against a real emulator on loopback: columns, resume, budgets, re-runs,
event loops, clients and request errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from evalkit.api import ApiError, AsyncClient, Client, RetryPolicy
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid, Persona, load_personas
from evalkit.runner import Budget, RunAborted, RunOptions, arun_grid, run_grid
from evalkit.store import IdentityMismatchError, load_run, transcript_hash

from .runner_fixtures import emulator_fixture
from .runner_support import (
    DESIGN_CONVERSATION_DTYPES,
    PERSONAS_DIR,
    TURN_DTYPES,
    Tap,
    build_assistant,
    make_grid,
    replace_request,
    wait_idle,
)

# --------------------------------------------------------------------------- fixtures, helpers

# one fast emulator for the module (stats are compared as deltas)
emu = emulator_fixture(time_scale=0.005, seed=11)
# an emulator whose turns take 50 ms each, so runs can be cut part-way
slow_emu = emulator_fixture(time_scale=0.01, seed=5, turn_delay=5.0)


@pytest.fixture(scope="module")
def assistant_id(emu: EmulatorServer) -> str:
    return build_assistant(emu)


@pytest.fixture(scope="module")
def personas() -> list[Persona]:
    return load_personas(PERSONAS_DIR)


def started(emu: EmulatorServer) -> int:
    return emu.stats()["started"]


def check_tables(run: Any, n: int) -> pd.DataFrame:
    """Exactly ``n`` unique conversations, turns matching them; returns the conversations."""
    conv: pd.DataFrame = run.conversations
    turns: pd.DataFrame = run.turns
    assert len(conv) == n
    assert conv["conversation_id"].is_unique
    assert not turns.duplicated(["conversation_id", "index"]).any()
    per_conv = turns.groupby("conversation_id").size()
    expected = conv.set_index("conversation_id")["n_turns"]
    assert per_conv.reindex(expected.index, fill_value=0).tolist() == expected.tolist()
    return conv


# --------------------------------------------------------------------------- a whole run


def test_grid_runs_to_done_with_the_design_columns(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas)
    client = Client(emu.base_url, emu.api_key)
    run = run_grid(
        grid,
        assistant_id,
        client=client,
        store=tmp_path / "runs",
        options=RunOptions(progress=False),
    )

    conv = check_tables(run, len(grid))
    turns = run.turns
    for column, dtype in DESIGN_CONVERSATION_DTYPES.items():
        assert str(conv[column].dtype) == dtype, column
    for column, dtype in TURN_DTYPES.items():
        assert str(turns[column].dtype) == dtype, column

    assert set(conv["status"]) == {"done"}
    assert (conv["run_id"] == run.run_id).all()
    assert (turns["run_id"] == run.run_id).all()
    assert set(conv["conversation_id"]) == {s.conversation_id for s in grid.conversations()}
    assert set(conv["cell_id"]) == {c.cell_id for c in grid.cells()}
    assert sorted(conv["repeat"].unique()) == [0, 1]
    assert (conv["conversation_id"] == conv["cell_id"] + "-" + conv["repeat"].astype(str)).all()
    assert set(conv["persona_label"]) == {p.label for p in personas[:5]}
    assert {json.loads(v)["name"] for v in conv["variables"]} == {"Ali", "Sara"}
    assert (conv["context"] == "Clinic reminder").all()
    assert conv["error_message"].isna().all()
    assert (conv["attempts"] >= 1).all()
    assert (conv["n_turns"] > 0).all()
    assert (conv["target"] == "draft").all()
    assert (conv["assistant_version"] == 1).all()
    assert (conv["first_turn_s"] >= 0).all()
    assert (conv["first_turn_s"] <= conv["duration_s"]).all()
    assert (conv["started_at"] <= conv["finished_at"]).all()

    rows: list[dict[Any, Any]] = conv.to_dict("records")
    for row in rows:
        mine = turns[turns["conversation_id"] == row["conversation_id"]].sort_values("index")
        assert mine["index"].tolist() == list(range(1, row["n_turns"] + 1))
        assert set(mine["role"]) <= {"agent", "caller"}
        assert mine["text"].str.len().min() > 0
        assert row["ended_by"] == mine["role"].iloc[-1]
        pairs = list(zip(mine["role"], mine["text"], strict=True))
        assert row["transcript_hash"] == transcript_hash(pairs)
    # initial_greeting: the agent opens every call
    first = turns[turns["index"] == 1]
    assert (first["role"] == "agent").all()

    manifest = load_run(run.run_id, store=tmp_path / "runs").manifest
    assert manifest["outcome"] == "complete"
    assert manifest["counts"]["done"] == len(grid)
    assert manifest["assistant_id"] == assistant_id
    # the project key is never written to disk
    for path in (tmp_path / "runs").rglob("*"):
        if path.is_file():
            assert emu.api_key.encode() not in path.read_bytes(), path


def test_default_client_comes_from_the_environment(
    emu: EmulatorServer,
    assistant_id: str,
    personas: list[Persona],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    grid = make_grid(personas, n=2, repeats=1)
    run = run_grid(grid, assistant_id, store=tmp_path, options=RunOptions(progress=False))
    assert run.counts["done"] == len(grid)


# --------------------------------------------------------------------------- resume, identity, budget


def test_resume_runs_nothing_twice(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas, n=5, repeats=2)  # 20 conversations
    client = Client(emu.base_url, emu.api_key)
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "resume-me"}

    s0 = started(emu)
    first = run_grid(
        grid,
        assistant_id,
        client=client,
        options=RunOptions(progress=False, budget=Budget(max_conversations=7)),
        **kw,
    )
    assert len(first.conversations) == 7
    assert first.manifest["outcome"] == "partial"
    assert started(emu) - s0 == 7
    # repeat-major order: a budget-cut run covers cells before repeating them
    assert set(first.conversations["repeat"]) == {0}
    kept = first.conversations.set_index("conversation_id")["transcript_hash"]

    s1 = started(emu)
    second = run_grid(grid, assistant_id, client=client, options=RunOptions(progress=False), **kw)
    assert started(emu) - s1 == len(grid) - 7
    conv = check_tables(second, len(grid))
    assert second.manifest["outcome"] == "complete"
    again = conv.set_index("conversation_id")["transcript_hash"]
    assert again[kept.index].tolist() == kept.tolist()  # finished ones were kept, not re-run
    assert second.manifest["journal"]["lines"] == len(grid)

    s2 = started(emu)
    third = run_grid(grid, assistant_id, client=client, options=RunOptions(progress=False), **kw)
    assert started(emu) - s2 == 0
    check_tables(third, len(grid))
    assert third.manifest["journal"]["superseded"] == 0


def test_changed_grid_with_the_same_run_id_is_refused(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    client = Client(emu.base_url, emu.api_key)
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "fixed"}
    grid = make_grid(personas, n=2, repeats=1)
    run_grid(grid, assistant_id, client=client, options=RunOptions(progress=False), **kw)
    s0 = started(emu)
    added = personas[2].label
    with pytest.raises(IdentityMismatchError, match=f"the persona '{added}' was added") as info:
        run_grid(
            make_grid(personas, n=3, repeats=1),
            assistant_id,
            client=client,
            options=RunOptions(progress=False),
            **kw,
        )
    assert info.value.stored not in str(info.value)  # words, not digests
    with pytest.raises(IdentityMismatchError, match="repeats changed from 1 to 2"):
        run_grid(
            make_grid(personas, n=2, repeats=2),
            assistant_id,
            client=client,
            options=RunOptions(progress=False),
            **kw,
        )
    with pytest.raises(IdentityMismatchError, match='the target changed from "draft" to "prod"'):
        run_grid(
            grid,
            assistant_id,
            client=client,
            target="prod",
            options=RunOptions(progress=False),
            **kw,
        )
    assert started(emu) == s0
    assert len(load_run("fixed", store=tmp_path).conversations) == len(grid)
    # a runtime knob is not part of the identity
    run = run_grid(
        grid,
        assistant_id,
        client=client,
        options=RunOptions(progress=False, concurrency=1, max_attempts=5),
        **kw,
    )
    assert len(run.conversations) == len(grid)
    assert started(emu) == s0


@pytest.mark.slow
def test_wall_time_budget_gives_a_partial_run_that_resume_completes(
    slow_emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant = build_assistant(slow_emu)
    grid = make_grid(personas, n=5, repeats=2)
    client = Client(slow_emu.base_url, slow_emu.api_key)
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "timed"}

    first = run_grid(
        grid,
        assistant,
        client=client,
        options=RunOptions(progress=False, concurrency=2, budget=Budget(max_seconds=0.6)),
        **kw,
    )
    assert first.manifest["outcome"] == "partial"
    assert len(first.conversations) < len(grid)
    check_tables(first, len(first.conversations))
    assert set(first.conversations["status"]) <= {"done"}  # cut conversations are not recorded
    assert wait_idle(slow_emu)["active"] == 0  # their streams were closed

    second = run_grid(
        grid, assistant, client=client, options=RunOptions(progress=False, concurrency=10), **kw
    )
    assert second.manifest["outcome"] == "complete"
    assert set(check_tables(second, len(grid))["status"]) == {"done"}


def test_budget_values_are_checked() -> None:
    with pytest.raises(ValueError, match="max_conversations"):
        Budget(max_conversations=-1)
    with pytest.raises(ValueError, match="max_seconds"):
        Budget(max_seconds=0)


# --------------------------------------------------------------------------- re-running statuses


def _failed_or_dropped_then_rerun_setup(
    emu: EmulatorServer, personas: list[Persona]
) -> tuple[str, dict[str, str], Grid]:
    project = emu.new_project()
    assistant = build_assistant(emu, api_key=project["apiKey"])
    # every request: refused with 503 (half of them) or dropped mid-stream (all the others)
    emu.set_faults(http503_rate=0.5, drop_rate=1.0, seed=3, api_key=project["apiKey"])
    return assistant, project, make_grid(personas, n=4, repeats=2)


async def test_rerun_failed_and_dropped_runs_them_again(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, project, grid = await asyncio.to_thread(
        _failed_or_dropped_then_rerun_setup, emu, personas
    )
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "flaky"}
    async with AsyncClient(emu.base_url, project["apiKey"], retry=RetryPolicy.never()) as client:
        first = await arun_grid(
            grid, assistant, client=client, options=RunOptions(progress=False, max_attempts=1), **kw
        )
        statuses = first.conversations["status"]
        assert len(first.conversations) == len(grid)
        assert set(statuses) <= {"failed", "dropped"}
        assert len(set(statuses)) == 2
        failed = first.conversations[statuses == "failed"]
        assert failed["error_message"].str.contains("503").all()
        assert (failed["n_turns"] == 0).all()
        assert failed["transcript_hash"].isna().all()

        await asyncio.to_thread(emu.set_faults, api_key=project["apiKey"])
        s0 = await asyncio.to_thread(started, emu)
        # without rerun: everything is recorded, nothing runs
        same = await arun_grid(
            grid, assistant, client=client, options=RunOptions(progress=False, max_attempts=1), **kw
        )
        assert await asyncio.to_thread(started, emu) == s0
        assert set(same.conversations["status"]) == set(statuses)

        again = await arun_grid(
            grid,
            assistant,
            client=client,
            options=RunOptions(progress=False, rerun=("failed", "dropped")),
            **kw,
        )
    assert await asyncio.to_thread(started, emu) - s0 == len(grid)
    conv = check_tables(again, len(grid))
    assert set(conv["status"]) == {"done"}
    assert again.manifest["journal"]["superseded"] == len(grid)


def test_run_grid_forwards_rerun(
    emu: EmulatorServer, personas: list[Persona], tmp_path: Path
) -> None:
    assistant, project, grid = _failed_or_dropped_then_rerun_setup(emu, personas)
    client = Client(emu.base_url, project["apiKey"], retry=RetryPolicy.never())
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "flaky"}
    run_grid(
        grid, assistant, client=client, options=RunOptions(progress=False, max_attempts=1), **kw
    )
    emu.set_faults(api_key=project["apiKey"])
    again = run_grid(
        grid,
        assistant,
        client=client,
        options=RunOptions(progress=False, rerun=("failed", "dropped")),
        **kw,
    )
    assert set(again.conversations["status"]) == {"done"}


def test_rerun_rejects_unknown_statuses(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="rerun"):
        asyncio.run(
            arun_grid(
                make_grid(personas, n=1, repeats=1),
                assistant_id,
                client=Client(emu.base_url, emu.api_key),
                store=tmp_path,
                options=RunOptions(rerun=("finished",)),
            )
        )


# --------------------------------------------------------------------------- event loops, clients


async def test_run_grid_inside_a_running_event_loop(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    """The Jupyter case: a loop is running in this thread and the sync API is called."""
    asyncio.get_running_loop()
    grid = make_grid(personas, n=2, repeats=1)
    run = run_grid(
        grid,
        assistant_id,
        client=Client(emu.base_url, emu.api_key),
        store=tmp_path,
        options=RunOptions(progress=False),
    )
    assert run.counts["done"] == len(grid)


def test_run_grid_called_from_a_coroutine_under_asyncio_run(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas, n=2, repeats=1)
    client = Client(emu.base_url, emu.api_key)

    async def notebook_cell() -> Any:
        return run_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(progress=False)
        )

    run = asyncio.run(notebook_cell())
    assert run.counts["done"] == len(grid)


async def test_arun_grid_with_an_async_client_leaves_it_open(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas, n=3, repeats=1)
    async with AsyncClient(emu.base_url, emu.api_key) as client:
        run = await arun_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(progress=False)
        )
        assert run.counts["done"] == len(grid)
        assert any(a.id == assistant_id for a in await client.list_assistants())


async def test_arun_grid_with_a_sync_client(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas, n=2, repeats=1)
    client = Client(emu.base_url, emu.api_key)
    run = await arun_grid(
        grid, assistant_id, client=client, store=tmp_path, options=RunOptions(progress=False)
    )
    assert run.counts["done"] == len(grid)
    assert client.list_assistants()  # still usable


def test_argument_checks(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    grid = make_grid(personas, n=1, repeats=1)
    client = Client(emu.base_url, emu.api_key)
    with pytest.raises(ValueError, match="concurrency"):
        run_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(concurrency=0)
        )
    with pytest.raises(ValueError, match="max_attempts"):
        run_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(max_attempts=0)
        )


# --------------------------------------------------------------------------- errors


def test_bad_api_key_stops_with_nothing_recorded(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    client = Client(emu.base_url, "sk_api_not-a-real-key-0000")
    s0 = started(emu)
    with pytest.raises((RunAborted, ApiError)) as info:
        run_grid(
            make_grid(personas, n=2),
            assistant_id,
            client=client,
            store=tmp_path,
            options=RunOptions(progress=False),
        )
    error = info.value if isinstance(info.value, ApiError) else info.value.__cause__
    assert isinstance(error, ApiError)
    assert error.status_code == 401
    assert "sk_api_not-a-real-key" not in str(info.value)
    assert started(emu) == s0
    assert not any(tmp_path.rglob("journal.jsonl"))


def test_bad_api_key_raises_run_aborted(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    client = Client(emu.base_url, "sk_api_not-a-real-key-0000")
    with pytest.raises(RunAborted):
        run_grid(
            make_grid(personas, n=2),
            assistant_id,
            client=client,
            store=tmp_path,
            options=RunOptions(progress=False),
        )


def test_errors_of_a_script_run_are_not_chained_to_the_loop_probe(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    client = Client(emu.base_url, "sk_api_not-a-real-key-0000")
    with pytest.raises((ApiError, RunAborted)) as info:
        run_grid(
            make_grid(personas, n=1),
            assistant_id,
            client=client,
            store=tmp_path,
            options=RunOptions(progress=False),
        )
    context = info.value.__context__
    while context is not None:
        assert "no running event loop" not in str(context)
        context = context.__context__


async def test_401_mid_run_aborts_and_keeps_what_finished(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    """From the third simulate request on, the emulator answers 401: the run stops at once."""

    def revoke(request: httpx.Request, n: int) -> httpx.Request:
        if n < 3:
            return request
        return replace_request(request, headers={"Authorization": "Bearer sk_api_revoked"})

    grid = make_grid(personas, n=5, repeats=1)
    kw: dict[str, Any] = {"store": tmp_path, "run_id": "revoked"}
    tap = Tap(revoke)
    async with AsyncClient(emu.base_url, emu.api_key, transport=tap) as client:
        with pytest.raises(RunAborted) as info:
            await arun_grid(
                grid,
                assistant_id,
                client=client,
                options=RunOptions(progress=False, concurrency=1),
                **kw,
            )
    assert isinstance(info.value.__cause__, ApiError)
    assert info.value.__cause__.status_code == 401
    assert tap.simulates == 3  # no request after the fatal one
    run = load_run("revoked", store=tmp_path)
    assert run.manifest["outcome"] == "interrupted"
    assert len(run.conversations) == 2
    assert set(run.conversations["status"]) == {"done"}

    async with AsyncClient(emu.base_url, emu.api_key) as client:
        resumed = await arun_grid(
            grid, assistant_id, client=client, options=RunOptions(progress=False), **kw
        )
    assert set(check_tables(resumed, len(grid))["status"]) == {"done"}


async def test_400_for_one_conversation_is_failed_and_the_rest_continue(
    emu: EmulatorServer, assistant_id: str, personas: list[Persona], tmp_path: Path
) -> None:
    """One request reaches the emulator with an over-long context: a real 400 for it alone."""
    label = personas[0].label

    def spoil_first(request: httpx.Request, n: int) -> httpx.Request:
        body = json.loads(request.content)
        if body["persona"]["label"] != label or spoil_first.done:  # type: ignore[attr-defined]
            return request
        spoil_first.done = True  # type: ignore[attr-defined]
        return replace_request(request, body={**body, "context": "x" * 9000})

    spoil_first.done = False  # type: ignore[attr-defined]
    grid = make_grid(personas, n=4, repeats=2)
    async with AsyncClient(emu.base_url, emu.api_key, transport=Tap(spoil_first)) as client:
        run = await arun_grid(
            grid, assistant_id, client=client, store=tmp_path, options=RunOptions(progress=False)
        )
    conv = check_tables(run, len(grid))
    failed = conv[conv["status"] == "failed"]
    assert len(failed) == 1
    row = failed.iloc[0]
    assert row["persona_label"] == label
    assert "400" in row["error_message"]
    assert "context" in row["error_message"]
    assert row["attempts"] == 1
    assert row["n_turns"] == 0
    assert pd.isna(row["ended_by"])
    assert pd.isna(row["transcript_hash"])
    assert (conv["status"] == "done").sum() == len(grid) - 1
    assert run.manifest["outcome"] == "complete"
    assert run.manifest["counts"]["failed"] == 1
