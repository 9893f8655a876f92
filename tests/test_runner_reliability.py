"""The runner's reliability acceptance (issue 4), against a real emulator on loopback:

1. with 10% dropped streams, 5% 503, 5% 429 and 2% error events, a 300-conversation run ends
   with every conversation accounted for, statuses classified correctly, and no duplicates;
2. a run killed with SIGKILL part-way and resumed ends with exactly the grid's conversations;
3. Ctrl-C during a run leaves zero active simulations on the emulator and no clones, and the
   journal keeps what finished.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.api import AsyncClient, Client, RetryPolicy
from evalkit.emulator import EmulatorServer
from evalkit.emulator._simulate import INJECTED_ERROR_MESSAGE
from evalkit.grid import Grid
from evalkit.runner import RunOptions, arun_grid, run_grid
from evalkit.store import load_run

from .runner_fixtures import emulator_fixture
from .runner_support import (
    assistant_ids,
    build_assistant,
    journal_lines,
    load_grid,
    reap,
    start_child,
    wait_for_child,
    wait_idle,
)

NASTALIQ = "Aap {{name}} ko yaad dilayen. Urdu mein, Nastaliq script mein baat karein."


# --------------------------------------------------------------------------- fixtures, helpers


# turns have no emulated latency, so the time scale sets mostly the five-minute ceiling: 3 s
# here. At 0.002 (0.6 s) a conversation on a loaded machine hit it and ended `error` with the
# ceiling's message, not the injected fault's.
emu = emulator_fixture(time_scale=0.01, seed=17)
# turns take 40 ms: a child's run is still going when it is killed or interrupted
slow_emu = emulator_fixture(time_scale=0.01, seed=9, turn_delay=4.0)


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in ("started", "completed", "errored", "dropped")}


def check_no_duplicates(run: Any, grid: Grid) -> pd.DataFrame:
    """Exactly the grid's conversations, once each; turns unique and matching ``n_turns``."""
    conv: pd.DataFrame = run.conversations
    turns: pd.DataFrame = run.turns
    assert len(conv) == len(grid)
    assert conv["conversation_id"].is_unique
    assert set(conv["conversation_id"]) == {s.conversation_id for s in grid.conversations()}
    assert not turns.duplicated(["conversation_id", "index"]).any()
    per_conv = turns.groupby("conversation_id").size()
    expected = conv.set_index("conversation_id")["n_turns"]
    assert per_conv.reindex(expected.index, fill_value=0).tolist() == expected.tolist()
    return conv


# --------------------------------------------------------------------------- 1. faults


async def faulty_assistant(emu: EmulatorServer, **faults: Any) -> tuple[str, str]:
    """A fresh project (its own fault settings) with a built assistant: (api key, assistant id)."""
    project = await asyncio.to_thread(emu.new_project)
    key = project["apiKey"]
    assistant = await asyncio.to_thread(build_assistant, emu, key)
    await asyncio.to_thread(lambda: emu.set_faults(api_key=key, **faults))
    return key, assistant


@pytest.mark.slow
async def test_300_conversations_under_faults_are_all_accounted_for(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    key, assistant = await faulty_assistant(
        emu, drop_rate=0.10, http503_rate=0.05, http429_rate=0.05, error_event_rate=0.02, seed=1234
    )
    grid = load_grid(15, 10)
    assert len(grid) == 300
    before = await asyncio.to_thread(emu.stats)

    async with AsyncClient(emu.base_url, key, retry=RetryPolicy.no_wait()) as client:
        run = await arun_grid(
            grid,
            assistant,
            client=client,
            store=tmp_path,
            run_id="faults",
            options=RunOptions(concurrency=24),
        )
    after = await asyncio.to_thread(wait_idle, emu)
    conv = check_no_duplicates(run, grid)
    assert run.manifest["journal"]["lines"] == len(grid)  # each recorded once, retries included
    assert run.manifest["counts"]["total"] == len(grid)
    by_status = conv["status"].value_counts().to_dict()
    assert set(by_status) <= {"done", "error", "dropped", "failed"}

    done = conv[conv["status"] == "done"]
    errors = conv[conv["status"] == "error"]
    dropped = conv[conv["status"] == "dropped"]
    failed = conv[conv["status"] == "failed"]
    # drops were re-run as new conversations; some succeeded after a retry
    assert (conv["attempts"] > 1).sum() >= 5
    assert (done["attempts"] > 1).any()
    assert (conv["attempts"] <= 3).all()
    assert done["transcript_hash"].notna().all()
    assert (done["n_turns"] > 0).all()
    # error events: classified `error`, never retried, message kept
    assert len(errors) >= 1
    assert (errors["error_message"] == INJECTED_ERROR_MESSAGE).all()
    assert (errors["n_turns"] >= 1).all()
    assert errors["transcript_hash"].notna().all()
    # still dropped after max_attempts (rare): attempts used up, partial transcript kept
    assert (dropped["attempts"] == 3).all()
    assert dropped["error_message"].str.contains("terminal event").all()
    # 429/503 refusals are retried by the client; only four refusals in a row fail
    assert failed["error_message"].str.contains("429|503").all()
    assert (failed["n_turns"] == 0).all()

    # the emulator's own counts agree with the classification, stream by stream
    d = delta(after, before)
    assert d["errored"] == len(errors)
    assert d["completed"] == len(done) + len(errors)
    assert d["started"] == int(conv["attempts"].sum()) - len(failed)
    retried_drops = int((conv.loc[conv["status"] != "dropped", "attempts"] - 1).sum())
    assert d["dropped"] == retried_drops + int(dropped["attempts"].sum())
    assert after["active"] == 0


async def test_every_stream_dropped_is_recorded_dropped_after_max_attempts(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    key, assistant = await faulty_assistant(emu, drop_rate=1.0, seed=1)
    grid = load_grid(3, 1)
    before = await asyncio.to_thread(emu.stats)
    async with AsyncClient(emu.base_url, key, retry=RetryPolicy.no_wait()) as client:
        run = await arun_grid(
            grid, assistant, client=client, store=tmp_path, options=RunOptions(max_attempts=2)
        )
    conv = check_no_duplicates(run, grid)
    assert set(conv["status"]) == {"dropped"}
    assert (conv["attempts"] == 2).all()
    assert conv["error_message"].str.contains("without a terminal event").all()
    # the turns received before the drop are kept (1 to 3 of them)
    assert conv["n_turns"].between(1, 3).all()
    assert (
        conv["ended_by"]
        == run.turns.groupby("conversation_id")["role"].last()[conv["conversation_id"]].to_numpy()
    ).all()
    d = delta(await asyncio.to_thread(wait_idle, emu), before)
    assert d["dropped"] == d["started"] == 2 * len(grid)


async def test_every_error_event_is_recorded_error_without_retry(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    key, assistant = await faulty_assistant(emu, error_event_rate=1.0, seed=1)
    grid = load_grid(3, 1)
    before = await asyncio.to_thread(emu.stats)
    async with AsyncClient(emu.base_url, key, retry=RetryPolicy.no_wait()) as client:
        run = await arun_grid(grid, assistant, client=client, store=tmp_path)
    conv = check_no_duplicates(run, grid)
    assert set(conv["status"]) == {"error"}
    assert (conv["attempts"] == 1).all()
    assert (conv["error_message"] == INJECTED_ERROR_MESSAGE).all()
    d = delta(await asyncio.to_thread(wait_idle, emu), before)
    assert d["errored"] == d["started"] == len(grid)


async def test_refusals_after_every_retry_are_recorded_failed(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    key, assistant = await faulty_assistant(emu, http429_rate=0.5, seed=2)
    grid = load_grid(4, 2)
    before = await asyncio.to_thread(emu.stats)
    async with AsyncClient(emu.base_url, key, retry=RetryPolicy.never()) as client:
        run = await arun_grid(grid, assistant, client=client, store=tmp_path)
    conv = check_no_duplicates(run, grid)
    assert set(conv["status"]) == {"failed", "done"}
    failed = conv[conv["status"] == "failed"]
    assert failed["error_message"].str.contains("429").all()
    assert (failed["attempts"] == 1).all()
    assert (failed["n_turns"] == 0).all()
    assert failed["ended_by"].isna().all()
    assert failed["transcript_hash"].isna().all()
    d = delta(await asyncio.to_thread(wait_idle, emu), before)
    assert d["started"] == d["completed"] == len(grid) - len(failed)


async def test_a_run_where_every_conversation_failed_is_finalized(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    key, assistant = await faulty_assistant(emu, http503_rate=1.0, seed=1)
    grid = load_grid(2, 1)
    async with AsyncClient(emu.base_url, key, retry=RetryPolicy.no_wait(2)) as client:
        run = await arun_grid(grid, assistant, client=client, store=tmp_path)
    conv = check_no_duplicates(run, grid)
    assert set(conv["status"]) == {"failed"}
    assert run.manifest["counts"]["failed"] == len(grid)


# --------------------------------------------------------------------------- 2. SIGKILL


@pytest.mark.slow
def test_run_killed_with_sigkill_resumes_to_exactly_the_grid(
    slow_emu: EmulatorServer, tmp_path: Path
) -> None:
    assistant = build_assistant(slow_emu)
    spec: dict[str, Any] = {
        "store": str(tmp_path),
        "run_id": "killed",
        "assistant_id": assistant,
        "personas": 5,
        "repeats": 6,
        "concurrency": 4,
    }
    grid = load_grid(spec["personas"], spec["repeats"])
    run_dir = tmp_path / "killed"
    child = start_child(slow_emu, spec)
    try:
        wait_for_child(child, lambda: journal_lines(run_dir) >= 6, "six conversations recorded")
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        reap(child)
    assert child.returncode == -signal.SIGKILL

    before = wait_idle(slow_emu)
    assert before["active"] == 0
    crashed = load_run("killed", store=tmp_path)
    recorded = len(crashed.conversations)
    assert 6 <= recorded < len(grid)
    assert crashed.manifest.get("finalized_at") is None  # died before finalizing
    kept = crashed.conversations.set_index("conversation_id")["transcript_hash"]

    run = run_grid(
        grid,
        assistant,
        client=Client(slow_emu.base_url, slow_emu.api_key),
        store=tmp_path,
        run_id="killed",
        options=RunOptions(concurrency=16, progress=False),
    )
    after = wait_idle(slow_emu)
    conv = check_no_duplicates(run, grid)
    assert set(conv["status"]) == {"done"}
    assert after["started"] - before["started"] == len(grid) - recorded  # nothing ran twice
    again = conv.set_index("conversation_id")["transcript_hash"]
    assert again[kept.index].tolist() == kept.tolist()
    assert run.manifest["outcome"] == "complete"
    assert run.manifest["journal"]["superseded"] == 0


# --------------------------------------------------------------------------- 3. Ctrl-C


@pytest.mark.slow
@pytest.mark.parametrize(
    "in_loop",
    [
        pytest.param(False, id="script"),
        pytest.param(True, id="notebook"),
    ],
)
def test_ctrl_c_stops_every_stream_deletes_the_clone_and_keeps_what_finished(
    slow_emu: EmulatorServer, tmp_path: Path, in_loop: bool
) -> None:
    """``script``: run_grid under asyncio.run; ``notebook``: run_grid called on a running loop
    (it runs on a worker thread), interrupted by SIGINT as a Jupyter kernel interrupt is."""
    assistant = build_assistant(slow_emu)
    before_ids = assistant_ids(slow_emu)
    spec: dict[str, Any] = {
        "store": str(tmp_path),
        "run_id": "interrupted",
        "assistant_id": assistant,
        "personas": 5,
        "repeats": 20,
        "concurrency": 4,
        "target": {"variant": "nastaliq", "instructions": NASTALIQ},
        "in_loop": in_loop,
    }
    grid = load_grid(spec["personas"], spec["repeats"])
    run_dir = tmp_path / "interrupted"
    child = start_child(slow_emu, spec)
    try:
        wait_for_child(
            child,
            lambda: journal_lines(run_dir) >= 3 and slow_emu.stats()["active"] >= 2,
            "three conversations recorded and streams open",
        )
        assert len(assistant_ids(slow_emu) - before_ids) == 1  # the variant's clone
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        reap(child)
    assert child.returncode == 130, f"{out}\n{err}"
    assert "interrupted" in out

    assert wait_idle(slow_emu, 5)["active"] == 0
    assert assistant_ids(slow_emu) == before_ids  # the clone was deleted

    run = load_run("interrupted", store=tmp_path)
    assert run.manifest["outcome"] == "interrupted"
    assert not run.from_journal  # tables were written on the way out
    conv = run.conversations
    assert 3 <= len(conv) < len(grid)
    assert conv["conversation_id"].is_unique
    assert set(conv["status"]) == {"done"}  # cut conversations are not recorded as failures
    assert journal_lines(run_dir) == len(conv)
