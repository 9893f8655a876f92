"""A resumed sweep or search deletes the clones its killed predecessor left (the owner's process
is gone), and only those: not a live run's, not another prefix's."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from evalkit.api import AsyncClient, Client
from evalkit.emulator import EmulatorServer, serve
from evalkit.targets import CLONE_PREFIX, CloneLease, CloneOwner
from evalkit.tuning._orphans import reap_orphans

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = yaml.safe_load((ROOT / "examples" / "assistant.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    with serve(time_scale=0.01, seed=3) as running:
        yield running


def _dead_pid() -> int:
    """The id of a process of this host that has exited (a SIGKILLed run's, say)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _clone(client: Client, source: str, run_id: str, *, alive: bool) -> str:
    owner = CloneOwner.current(run_id, CloneLease())  # this host, a lease that still holds
    if not alive:
        owner = replace(owner, pid=_dead_pid())
    made = client.create_assistant(
        f"{CLONE_PREFIX} candidate", EXAMPLE, description=owner.description(source)
    )
    return made.id


def test_a_resume_reaps_its_own_prefix_orphans_only(emu: EmulatorServer) -> None:
    with Client(emu.base_url, emu.api_key) as client:
        source = client.create_assistant("Clinic reminder", EXAMPLE).id
        orphan = _clone(client, source, "opt 7-r1-c2", alive=False)  # spelled as markers spell
        live = _clone(client, source, "opt 7-r1-c3", alive=True)  # a run still going
        other = _clone(client, source, "opt 70-r1-c1", alive=False)  # another prefix's
        stranger = _clone(client, source, "nightly-draft", alive=False)

        async def go() -> list[str]:
            async with AsyncClient(emu.base_url, emu.api_key) as aclient:
                return await reap_orphans(aclient, "opt 7")

        deleted = asyncio.run(go())
        ids = {a.id for a in client.list_assistants()}
        try:
            assert deleted == [orphan]
            assert orphan not in ids
            assert {live, other, stranger} <= ids
        finally:
            for left in (live, other, stranger):
                client.delete_assistant(left)
