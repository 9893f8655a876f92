"""Issue 14, item 4: a temporary clone belongs to the run that made it; only clones whose owner
is gone are reported and deleted (or every one with ``include_live=True``, the CLI's --force)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.api import AsyncClient, Client
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.store import load_run
from evalkit.targets import (
    CLONE_DESCRIPTION,
    CLONE_PREFIX,
    CloneLease,
    CloneOwner,
    SnapshotStore,
    Variant,
    clone_owner,
    find_clones,
    owner_gone,
    resolve_target,
    simulation_target,
)
from evalkit.targets._clones import _hostname

from .runner_fixtures import emulator_fixture
from .runner_support import (
    assistant_ids,
    build_assistant,
    load_grid,
    reap,
    start_child,
    wait_for_child,
    wait_idle,
)
from .waiting import await_until

MINIMAL = {"agent": {"instructions": "Say hello to {{name}}."}}

slow_emu = emulator_fixture(time_scale=0.01, seed=13, turn_delay=4.0)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def owner(pid: int, *, host: str | None = None, minutes: float = 10) -> CloneOwner:
    until = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=minutes)
    return CloneOwner("r-1", host or _hostname(), pid, until)


def plant_clone(client: Client, description: str) -> str:
    made = client.create_assistant(f"{CLONE_PREFIX} planted", MINIMAL, description=description)
    return made.id


# --------------------------------------------------------------------------- owners


def test_an_owner_marker_round_trips_through_a_description(slow_emu: EmulatorServer) -> None:
    client = Client(slow_emu.base_url, slow_emu.api_key)
    mine = owner(os.getpid())
    clone_id = plant_clone(client, mine.description("asst_x"))
    listed = next(a for a in client.list_assistants() if a.id == clone_id)
    assert clone_owner(listed) == mine
    assert not owner_gone(clone_owner(listed))
    assert find_clones([listed]) == []
    assert find_clones([listed], include_live=True) == [listed]
    client.delete_assistant(clone_id)


@pytest.mark.parametrize(
    ("make", "gone"),
    [
        pytest.param(lambda: None, True, id="no-owner-recorded"),
        pytest.param(lambda: owner(os.getpid()), False, id="this-process"),
        pytest.param(lambda: owner(dead_pid()), True, id="process-exited"),
        pytest.param(lambda: owner(os.getpid(), minutes=-1), True, id="lease-expired"),
        pytest.param(lambda: owner(dead_pid(), host="other-ci-shard"), False, id="other-host"),
        pytest.param(
            lambda: owner(1, host="other-ci-shard", minutes=-1), True, id="other-host-expired"
        ),
    ],
)
def test_an_owner_is_gone_when_its_process_exited_or_its_lease_expired(
    make: Any, gone: bool
) -> None:
    assert owner_gone(make()) is gone


# --------------------------------------------------------------------------- the delete path


@pytest.mark.slow
def test_clones_delete_leaves_a_live_runs_clone_alone(
    slow_emu: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = build_assistant(slow_emu)
    client = Client(slow_emu.base_url, slow_emu.api_key)
    before = assistant_ids(slow_emu)
    spec: dict[str, Any] = {
        "store": str(tmp_path),
        "run_id": "live",
        "assistant_id": assistant,
        "personas": 2,
        # long enough that the run is still going when `clones --delete` (a CLI start) runs,
        # on a loaded machine too
        "repeats": 16,
        "concurrency": 2,
        "target": {"variant": "v", "instructions": "Be brief with {{name}}."},
    }
    child = start_child(slow_emu, spec)
    try:
        wait_for_child(child, lambda: slow_emu.stats()["active"], "the child's run to start")
        (live,) = assistant_ids(slow_emu) - before
        dead = plant_clone(client, owner(dead_pid()).description(assistant))
        legacy = plant_clone(client, f"{CLONE_DESCRIPTION} {assistant}; deleted when the run ends.")

        monkeypatch.setenv("EVALKIT_BASE_URL", slow_emu.base_url)
        monkeypatch.setenv("EVALKIT_API_KEY", slow_emu.api_key)
        result = CliRunner().invoke(app, ["clones", "--delete"])
        assert result.exit_code == 0, result.output
        remaining = assistant_ids(slow_emu)
        assert live in remaining  # the live run's clone is left alone
        assert dead not in remaining
        assert legacy not in remaining
        assert live not in result.output

        out, err = child.communicate(timeout=60)
    finally:
        reap(child)
    assert child.returncode == 0, f"{out}\n{err}"
    grid = load_grid(spec["personas"], spec["repeats"])
    assert f"finished {len(grid)}" in out
    run = load_run("live", store=tmp_path)
    assert set(run.conversations["status"]) == {"done"}  # no conversation hit a 404
    wait_idle(slow_emu)
    assert assistant_ids(slow_emu) == before  # the run deleted its own clone


def test_a_running_clone_renews_its_lease(slow_emu: EmulatorServer, tmp_path: Path) -> None:
    assistant = build_assistant(slow_emu)
    lease = CloneLease(duration_s=30.0, renew_every_s=0.05)

    async def go() -> tuple[CloneOwner | None, CloneOwner | None, str]:
        async with AsyncClient(slow_emu.base_url, slow_emu.api_key) as client:
            resolved = await resolve_target(
                client, assistant, Variant.with_instructions("v", "Hi"), SnapshotStore(tmp_path)
            )
            async with simulation_target(client, resolved, "lease-run", lease) as clone_id:
                listed = {a.id: a for a in await client.list_assistants()}
                first = clone_owner(listed[clone_id])
                assert first is not None

                async def renewed() -> CloneOwner | None:
                    listed = {a.id: a for a in await client.list_assistants()}
                    later = clone_owner(listed[clone_id])
                    return later if later and later.lease_until > first.lease_until else None

                # renewed every 0.05 s; the lease's end is kept to the second
                later = await await_until(renewed, 10, what="the lease renewed", interval=0.05)
            return first, later, clone_id

    first, later, clone_id = asyncio.run(go())
    assert first is not None
    assert later is not None
    assert first.run_id == later.run_id == "lease-run"
    assert first.pid == os.getpid()
    assert later.lease_until > first.lease_until
    assert clone_id not in assistant_ids(slow_emu)
