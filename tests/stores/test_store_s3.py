"""Stores in S3 against a real S3 protocol server (moto on loopback, through s3fs): a run
killed just before or just after a journal commit resumes from the URL in a fresh process with
exactly the grid; two shards written to one prefix merge exactly; catalog, SQL and history
agree with a local store."""

from __future__ import annotations

import signal
from pathlib import Path

import pandas as pd
import pytest
import s3fs
from typer.testing import CliRunner

import evalkit
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.store import catalog, list_runs, load_run, load_runs, sql

from ..runner_fixtures import emulator_fixture
from ..runner_support import build_assistant, load_grid, reap, start_child
from .nights import run_nights

emu = emulator_fixture(time_scale=0.01, seed=11, turn_delay=2.0)


def _objects(url: str, run_id: str) -> int:
    fs = s3fs.S3FileSystem(use_listings_cache=False)
    try:
        return len(fs.ls(f"{url.removeprefix('s3://')}/{run_id}/journal", refresh=True))
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_run_killed_around_a_commit_resumes_from_the_url_with_exactly_the_grid(
    emu: EmulatorServer, bucket: str, when: str
) -> None:
    assistant = build_assistant(emu)
    spec = {
        "store": bucket,
        "run_id": "nightly",
        "assistant_id": assistant,
        "personas": 4,
        "repeats": 2,
        # two workers: each commit holds at most two conversations, so the kill at the second
        # commit always leaves part of the grid to run, whatever the machine's speed
        "concurrency": 2,
        "kill_at": [2, when],  # SIGKILL just before / just after the 2nd journal object
    }
    child = start_child(emu, spec)
    try:
        _out, err = child.communicate(timeout=240)
    finally:
        reap(child)
    assert child.returncode == -signal.SIGKILL, err
    assert _objects(bucket, "nightly") == (1 if when == "before" else 2)
    before = load_run("nightly", bucket)
    kept = before.conversations.set_index("conversation_id")["transcript_hash"]
    grid = {slot.conversation_id for slot in load_grid(4, 2).conversations()}
    assert 0 < len(kept) <= (2 if when == "before" else 4) < len(grid)
    del spec["kill_at"]

    again = start_child(emu, spec)  # a fresh process, as on another machine
    _out, err = again.communicate(timeout=240)
    assert again.returncode == 0, err
    after = load_run("nightly", bucket)
    ids = after.conversations["conversation_id"]
    assert not ids.duplicated().any()
    assert set(ids) == grid
    assert not after.from_journal  # finalize wrote the parquet tables at the URL
    restored = after.conversations.set_index("conversation_id")["transcript_hash"]
    pd.testing.assert_series_equal(restored.loc[kept.index], kept)  # nothing recorded was lost
    assert list_runs(bucket)["outcome"].tolist() == ["complete"]


@pytest.mark.slow
def test_two_shards_on_one_prefix_merge_exactly(emu: EmulatorServer, bucket: str) -> None:
    assistant = build_assistant(emu)
    children = [
        start_child(
            emu,
            {
                "store": bucket,
                "run_id": f"shard-{i}",
                "assistant_id": assistant,
                "personas": 3,
                "repeats": 2,
                "concurrency": 4,
                "shard": [i, 2],
            },
        )
        for i in range(2)
    ]
    for child in children:
        _out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err
    merged = load_runs(bucket)
    grid = {slot.conversation_id for slot in load_grid(3, 2).conversations()}
    assert sorted(merged["conversation_id"]) == sorted(grid)
    cat = catalog(bucket)
    assert cat["grid_identity"].nunique() == 1
    assert sorted(cat["shard"]) == ["0/2", "1/2"]
    listed = CliRunner().invoke(app, ["runs", "--store", bucket])
    assert listed.exit_code == 0, listed.output
    assert "shard-0" in listed.output
    assert "shard-1" in listed.output


def test_catalog_sql_and_history_are_the_same_at_a_url_as_in_a_folder(
    emu: EmulatorServer, bucket: str, tmp_path: Path
) -> None:
    assistant = build_assistant(emu)
    run_nights(emu, tmp_path, 3, assistant=assistant)
    run_nights(emu, bucket, 3, assistant=assistant)
    local, remote = catalog(tmp_path), catalog(bucket)
    same = [c for c in local.columns if c not in ("path", "started_at", "finished_at")]
    pd.testing.assert_frame_equal(local[same], remote[same])
    assert remote["path"].str.startswith(bucket).all()
    query = (
        "select c.run_id, g.rule_id, count(*) n, sum(g.points_awarded) pts from grades g "
        "join conversations c using (run_id, conversation_id) group by all order by all"
    )
    pd.testing.assert_frame_equal(sql(query, tmp_path), sql(query, bucket))
    turns = sql("select count(*) n from turns", bucket)["n"].iloc[0]
    assert turns == len(load_runs(bucket, table="turns"))
    cols = ["run_id", "score", "score_low", "score_high", "verdict_vs_previous", "is_last_good"]
    pd.testing.assert_frame_equal(evalkit.history(tmp_path)[cols], evalkit.history(bucket)[cols])
    shown = CliRunner().invoke(app, ["history", "--store", bucket])
    assert shown.exit_code == 0, shown.output
    assert "night-02" in shown.output
