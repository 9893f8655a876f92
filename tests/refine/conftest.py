"""Fixtures of the refine tests: one emulator per module on 127.0.0.1 and the demo's story
(a built, published assistant whose draft lost the Nastaliq and yes/no lines, plus a manual
greeting edit a build will overwrite)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit import Client
from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, CONTEXT, DRAFT_INSTRUCTIONS, GREETING, PROD_INSTRUCTIONS
from evalkit.emulator import EmulatorServer, serve
from evalkit.grid import Grid, load_personas
from evalkit.refine import PollPolicy
from evalkit.targets import ConfigSnapshot, SnapshotStore

TIME_SCALE = 0.002
"""Builds take 120 emulated seconds: 0.24 s here."""
FAST_POLL = PollPolicy(interval=0.02, backoff=1.0, max_interval=0.02, timeout=20.0)
NASTALIQ_FEEDBACK = (
    "Always answer in Urdu (Nastaliq) script, never Roman Urdu. State the date and time and "
    "ask the caller to confirm with a yes or no."
)
SCORECARD = Path(__file__).resolve().parents[2] / "scorecards" / "appointment-reminder-ur.yaml"


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    with serve(port=0, time_scale=TIME_SCALE, seed=7) as server:
        yield server


@pytest.fixture
def client(emu: EmulatorServer) -> Iterator[Client]:
    with Client(emu.base_url, emu.api_key) as c:
        yield c


@dataclass(frozen=True)
class Demo:
    assistant_id: str
    store: Path | str


def make_demo(emu: EmulatorServer, client: Client, store: Path | str) -> Demo:
    """The demo's regressed draft: prod v1 (snapshotted), draft v2 without the script and
    confirmation lines, with a hand-written greeting."""
    built = emu.build(
        "Clinic appointment reminder",
        {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
        PROD_INSTRUCTIONS,
        initial_greeting=True,
    )
    assistant_id = str(built["realtimeAssistantId"])
    (found,) = [a for a in client.list_assistants() if a.id == assistant_id]
    SnapshotStore(store).save(ConfigSnapshot.from_assistant(found))
    emu.publish(assistant_id)
    config = found.config.to_json()
    config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
    config["agent"]["greetingInstructions"] = GREETING
    client.update_assistant(assistant_id, config=config)
    return Demo(assistant_id, store)


@pytest.fixture
def demo(emu: EmulatorServer, client: Client, tmp_path: Path) -> Demo:
    return make_demo(emu, client, tmp_path / "runs")


def demo_grid(repeats: int = 3) -> Grid:
    personas = [
        p
        for p in load_personas(bundled_path("personas"))
        if p.label in ("cooperative", "busy-hangs-up", "confused-elderly", "code-switching")
    ]
    return Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats=repeats)
