"""Turn timing: the runner records each turn event's arrival (``at_s``), the loaders derive an
agent turn's ``latency_s``, and runs recorded before turn timing still load (NaN, said once)."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from evalkit.api import Client
from evalkit.emulator import EmulatorServer, EmulatorSettings
from evalkit.grid import load_personas
from evalkit.runner import RunOptions, run_grid
from evalkit.store import RunWriter, TurnRecord, load_run, load_runs

from .runner_fixtures import emulator_fixture
from .runner_support import PERSONAS_DIR, build_assistant, make_grid
from .test_store import manifest, record

# every turn is held exactly 50 ms (5 emulated seconds x 0.01, no jitter) before it is sent
slow_emu = emulator_fixture(
    settings=EmulatorSettings(time_scale=0.01, seed=7, turn_delay=5.0, turn_jitter=0.0)
)
DELAY = 0.05


def test_runner_records_arrival_times_and_agent_latency(
    slow_emu: EmulatorServer, tmp_path: Path
) -> None:
    grid = make_grid(load_personas(PERSONAS_DIR), n=2, repeats=1)
    client = Client(slow_emu.base_url, slow_emu.api_key)
    run = run_grid(
        grid,
        build_assistant(slow_emu),
        client=client,
        store=tmp_path,
        options=RunOptions(progress=False),
    )
    turns, conv = run.turns, run.conversations.set_index("conversation_id")
    assert turns["at_s"].notna().all()
    for cid, one in turns.groupby("conversation_id"):
        at = one["at_s"].to_numpy()
        assert (np.diff(at) > 0).all()  # arrivals in speaking order
        # the first turn's arrival is the conversation's first_turn_s, within the duration
        assert at[0] == pytest.approx(conv.loc[cid, "first_turn_s"], abs=1e-6)
        assert at[-1] <= conv.loc[cid, "duration_s"]
        latency = one["latency_s"].to_numpy()
        assert math.isnan(latency[0])
        later = one.iloc[1:]
        agent = (later["role"] == "agent").to_numpy()
        assert np.isnan(later["latency_s"].to_numpy()[~agent]).all()
        expected = np.diff(at)[agent]
        assert np.allclose(later["latency_s"].to_numpy()[agent], expected)
        # the emulator holds each turn DELAY, one after another, so turn k cannot arrive
        # before k x DELAY from the request: a bound no scheduling jitter can break (unlike
        # one gap between two arrivals, which a late previous arrival shortens)
        assert (at >= DELAY * np.arange(1, len(at) + 1) * 0.98).all(), at
    assert turns["latency_s"].notna().any()
    assert run.has_turn_timing


def _old_run(store: Path, run_id: str = "old") -> Path:
    """A run written as evalkit wrote them before turn timing (no at_s anywhere)."""
    with RunWriter.create(store, run_id, manifest()) as writer:
        for i in range(2):
            writer.append(
                record(i, run_id),
                [
                    TurnRecord(1, "agent", "Hello"),
                    TurnRecord(2, "caller", "Hi"),
                    TurnRecord(3, "agent", "Bye"),
                ],
            )
        writer.finalize()
    folder = store / run_id
    journal = folder / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    for line in lines:
        for turn in line["turns"]:
            del turn["at_s"]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = pq.read_table(folder / "turns.parquet")
    pq.write_table(table.drop_columns(["at_s"]), folder / "turns.parquet")
    return folder


@pytest.mark.parametrize("source", ["parquet", "journal"])
def test_runs_recorded_before_turn_timing_load_with_nan_said_once(
    tmp_path: Path, source: str, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _old_run(tmp_path)
    if source == "journal":
        (folder / "turns.parquet").unlink()
        (folder / "conversations.parquet").unlink()
    run = load_run("old", store=tmp_path)
    with caplog.at_level(logging.WARNING, logger="evalkit.store"):
        turns = run.turns
        again = run.turns
    assert len(turns) == 6
    assert turns["at_s"].isna().all()
    assert turns["latency_s"].isna().all()
    assert again is turns
    said = [r for r in caplog.records if "before turn timing" in r.getMessage()]
    assert len(said) == 1
    assert "old" in said[0].getMessage()
    assert not run.has_turn_timing


def test_latency_is_per_conversation_and_only_for_agent_answers(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path, "r", manifest()) as writer:
        writer.append(
            record(0, "r"),
            [(1, "caller", "Hello?", 0.5), (2, "agent", "Hi", 1.75), (3, "caller", "Bye", 2.0)],
        )
        writer.append(
            record(1, "r"),
            [(1, "agent", "Hello", 0.25), (2, "caller", "Yes", 1.0), (3, "agent", "OK", None)],
        )
        writer.finalize()
    turns = load_runs(["r"], store=tmp_path, table="turns")
    latency = turns["latency_s"].tolist()
    assert latency[1] == pytest.approx(1.25)
    # a conversation's first turn is never timed against the previous conversation's last
    assert [math.isnan(v) for i, v in enumerate(latency) if i != 1] == [True] * 5


def test_bad_arrival_times_are_refused_naming_the_turn(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path, "r", manifest()) as writer:
        for bad in (-1.0, float("inf"), "1.5"):
            with pytest.raises(ValueError, match="turn 2: at_s"):
                writer.append(
                    record(0, "r"),
                    [(1, "agent", "a", 0.1), (2, "caller", "b", bad), (3, "agent", "c", 0.3)],
                )
