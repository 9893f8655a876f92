"""History compares like with like: series per assistant, target, scorecard, grid and variant;
shards of one night merged into one point; a partial run drawn but never compared nor
last-known-good; a sequential run compared on the repeats it has; `evalkit history` lists each
series under its own heading."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli import app
from evalkit.flows import nightly_trend

from .series_store import write_night


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("series") / "runs"
    for night in range(3):
        write_night(root, f"draft-{night}", night=night)
        write_night(root, f"prod-{night}", night=night, target="prod")
    write_night(root, "other-0", night=0, assistant="asst_2")
    write_night(root, "other-1", night=1, assistant="asst_2", drop=30)
    write_night(root, "draft-3-partial", night=3, finished=0.3)
    write_night(root, "draft-4-s0", night=4, shard=(0, 2))
    write_night(root, "draft-4-s1", night=4, shard=(1, 2))
    write_night(root, "draft-5-seq", night=5, sequential_repeats=2)
    write_night(root, "draft-6-s0", night=6, shard=(0, 2))  # its sibling never ran
    return root


def test_every_verdict_compares_runs_of_one_series(store: Path) -> None:
    frame = evalkit.history(store)
    keys = frame.groupby("series")[["assistant_id", "target"]].nunique()
    assert (keys == 1).all().all()
    assert frame["series"].nunique() == 3
    series_of = dict(zip(frame["run_id"], frame["series"], strict=True))
    for column in ("previous_run", "last_good_run"):
        compared = frame.dropna(subset=[column])
        assert len(compared) > 0
        assert (compared[column].map(series_of) == compared["series"]).all(), column
    # asst_2's second night lost 30 points: flagged within its own series only
    other = frame[frame["assistant_id"] == "asst_2"].set_index("run_id")
    assert other.loc["other-1", "alarm"] == "regressed"
    assert other.loc["other-1", "previous_run"] == "other-0"
    firsts = frame.groupby("series").head(1)
    assert firsts["note"].str.contains("first of its series").all()
    assert firsts["verdict_vs_previous"].isna().all()


def test_shards_merge_partials_are_drawn_and_sequential_runs_compare_on_their_repeats(
    store: Path,
) -> None:
    frame = evalkit.history(
        store, options=evalkit.flows.HistoryOptions(assistant_id="asst_1", target="draft")
    )
    rows = frame.set_index("run_id")
    assert list(rows.index) == [
        "draft-0",
        "draft-1",
        "draft-2",
        "draft-3-partial",
        "draft-4-s0",
        "draft-5-seq",
        "draft-6-s0",
    ]
    partial = rows.loc["draft-3-partial"]
    assert "not finished complete" in partial["note"]
    assert pd.isna(partial["verdict_vs_previous"])
    assert pd.isna(partial["verdict_vs_last_good"])
    assert not partial["is_last_good"]
    assert partial["alarm"] is None
    merged = rows.loc["draft-4-s0"]
    assert merged["note"] == "2 shards merged: draft-4-s0, draft-4-s1"
    assert merged["conversations"] == 54  # both shards' 9 cells x 3 repeats
    assert merged["previous_run"] == "draft-2"  # the partial night is skipped
    assert merged["is_last_good"]
    seq = rows.loc["draft-5-seq"]
    assert seq["conversations"] == 36
    assert "sequential" in seq["note"]
    assert seq["previous_run"] == "draft-4-s0"
    assert isinstance(seq["verdict_vs_previous"], str)
    lone = rows.loc["draft-6-s0"]
    assert "shard 1 of 2 missing" in lone["note"]
    assert pd.isna(lone["verdict_vs_last_good"])
    assert not lone["is_last_good"]
    assert evalkit.flows.latest_regression(frame) is None


def test_the_command_lists_each_series_under_its_heading(store: Path) -> None:
    out = CliRunner().invoke(app, ["history", "--store", str(store)])
    assert out.exit_code == 0, out.output
    headings = [line for line in out.output.splitlines() if line.startswith("series ")]
    assert len(headings) == 3
    assert any("asst_1 draft, scorecard card-v1" in h for h in headings)
    assert any("asst_1 prod, scorecard card-v1" in h for h in headings)
    assert any("asst_2 draft, scorecard card-v1" in h for h in headings)
    assert "2 shards merged" in out.output
    gate = CliRunner().invoke(app, ["history", "--store", str(store), "--fail-on-regression"])
    assert gate.exit_code == 1  # asst_2's newest night is a confirmed regression
    assert "regression: run other-1" in gate.output


def test_the_trend_has_one_summary_row_per_series_and_draws_one_line_each(store: Path) -> None:
    from evalkit.report.plots import score_trend

    trend = nightly_trend(store)
    fig = score_trend(trend.by_run, labels=dict(trend.series_labels))
    (ax,) = fig.axes
    lines = [line.get_label() for line in ax.get_lines()]
    assert sorted(lines) == sorted(trend.series_labels.values())
    assert len(trend.summary) == 3
    assert set(trend.summary["series"]) == set(trend.by_run["series"])
    assert trend.headline().count("scored") == 3
    assert trend.regression is not None
    assert trend.regression["run_id"] == "other-1"
