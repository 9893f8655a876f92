"""Stores at URLs without a server: scheme handling (issue 22 item 4), memory:// round trips,
the catalog and SQL on a local store, and history's verdicts on planted regressions."""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli import app
from evalkit.store import (
    GRADES_SCHEMA,
    RunLockedError,
    RunWriter,
    UnsupportedStoreError,
    catalog,
    grades_frame,
    grades_path,
    list_runs,
    load_run,
    load_runs,
    open_store,
    record_grades_summary,
    sql,
    write_grades,
)
from tests.simulate import SyntheticTruth, synthetic_grades

from ..test_store import manifest, record, turns_for


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("gs://bucket/runs", ["gs://", "gcsfs", "evalkit[gs]"]),
        ("az://container/runs", ["az://", "adlfs", "evalkit[az]"]),
        ("ftpx://host/runs", ["ftpx://", "evalkit[s3]"]),
    ],
)
def test_an_unsupported_store_url_names_the_scheme_and_the_extra(
    url: str, words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for attempt in (
        lambda: RunWriter.create(url, "r1", manifest()),
        lambda: list_runs(url),
        lambda: load_run("r1", url),
        lambda: catalog(url),
    ):
        with pytest.raises(UnsupportedStoreError) as caught:
            attempt()
        for word in words:
            assert word in str(caught.value)
    result = CliRunner().invoke(app, ["runs", "--store", url])
    assert result.exit_code == 1
    assert words[-1] in result.output
    assert list(tmp_path.iterdir()) == []  # never a local folder named after the URL


def test_file_urls_are_local_folders(tmp_path: Path) -> None:
    assert open_store(f"file://{tmp_path}/runs") == tmp_path / "runs"
    assert open_store(tmp_path / "runs") == tmp_path / "runs"


def _write(store: object, run_id: str, n: int) -> None:
    with RunWriter.create(store, run_id, manifest()) as writer:  # type: ignore[arg-type]
        for i in range(n):
            writer.append(record(i, run_id), turns_for(i))

        async def more() -> None:
            await asyncio.gather(
                *(writer.aappend(record(i, run_id), turns_for(i)) for i in range(n, 2 * n))
            )

        asyncio.run(more())
        writer.append(record(0, run_id, status="error", n_turns=0), [])  # the last line wins
        writer.finalize({"outcome": "complete"})


def test_a_memory_store_holds_exactly_what_a_local_one_does(tmp_path: Path) -> None:
    url = f"memory://evalkit-{os.getpid()}-{id(tmp_path)}/runs"
    _write(tmp_path, "r1", 6)
    _write(url, "r1", 6)
    local, remote = load_run("r1", tmp_path), load_run("r1", url)
    pd.testing.assert_frame_equal(local.conversations, remote.conversations)
    pd.testing.assert_frame_equal(local.turns, remote.turns)
    assert len(remote.conversations) == 12
    assert remote.conversations.set_index("conversation_id").loc["conv-000", "status"] == "error"
    listed = list_runs(url)
    assert listed[["run_id", "outcome", "n_conversations"]].to_dict("records") == [
        {"run_id": "r1", "outcome": "complete", "n_conversations": 12}
    ]
    assert listed["path"].iloc[0] == f"{url}/r1"


def test_two_writers_on_one_run_id_at_a_url_never_both_win(tmp_path: Path) -> None:
    url = f"memory://evalkit-race-{id(tmp_path)}/runs"
    first = RunWriter.create(url, "r1", manifest())
    first.append(record(0), turns_for(0))
    with pytest.raises(evalkit.store.RunExistsError):
        RunWriter.create(url, "r1", manifest())
    second = RunWriter.open(url, "r1", manifest())  # a resume takes the run over
    assert "conv-000" in second.finished
    with pytest.raises(RunLockedError, match="took this run over"):
        first.finalize()
    second.append(record(1), turns_for(1))
    second.finalize()
    assert sorted(load_run("r1", url).conversations["conversation_id"]) == ["conv-000", "conv-001"]


def _synthetic_store(store: Path | str, drops: list[float], seed: int = 0) -> None:
    """One run per night whose grades come from our generator; ``drops`` plants points lost."""
    for night, drop in enumerate(drops):
        run_id = f"night-{night}"
        truth = SyntheticTruth.demo() if drop == 0 else SyntheticTruth.demo().shifted(-drop)
        grades = synthetic_grades(truth, repeats=3, seed=seed * 100 + night, run_id=run_id)
        ids = sorted(set(grades["conversation_id"]))
        with RunWriter.create(store, run_id, manifest(assistant_id="asst_1")) as writer:
            for i, cid in enumerate(ids):
                writer.append(record(i, run_id, conversation_id=cid), turns_for(i))
            run = writer.finalize({"outcome": "complete"})
        rubric = str(grades["rubric_version_id"].iloc[0])
        full = grades_frame(
            {c: grades[c] for c in grades.columns if c in GRADES_SCHEMA.names}, len(grades)
        )
        write_grades(full, grades_path(run.path, rubric), {})
        record_grades_summary(run.path, rubric, len(ids), 0.0)


def test_history_marks_a_planted_drop_against_the_previous_and_the_last_good_run(
    tmp_path: Path,
) -> None:
    _synthetic_store(tmp_path, [0, 0, 25, 25])
    frame = evalkit.history(tmp_path)
    assert list(frame["run_id"]) == ["night-0", "night-1", "night-2", "night-3"]
    assert (frame["score_low"] <= frame["score"]).all()
    assert (frame["score"] <= frame["score_high"]).all()
    assert frame["verdict_vs_previous"].iloc[2] == "regressed"
    assert frame["verdict_vs_last_good"].iloc[2] == "regressed"
    # night 3 is as bad as night 2: no change against it, still a regression against night 1
    assert frame["verdict_vs_previous"].iloc[3] in ("no_difference", "insufficient_evidence")
    assert list(frame["last_good_run"].iloc[2:]) == ["night-1", "night-1"]
    assert list(frame["is_last_good"]) == [True, True, False, False]
    assert evalkit.flows.latest_regression(frame)["run_id"] == "night-3"
    by_rule = evalkit.history(tmp_path, options=evalkit.flows.HistoryOptions(by="rule"))
    assert set(by_rule["run_id"]) == set(frame["run_id"])
    assert by_rule["rule_id"].nunique() == len(by_rule) // 4

    runner = CliRunner()
    failed = runner.invoke(app, ["history", "--store", str(tmp_path), "--fail-on-regression"])
    assert failed.exit_code == 1, failed.output
    assert "regression: run night-3" in failed.output
    assert "REGRESSED" in failed.output
    shown = runner.invoke(app, ["history", "--store", str(tmp_path), "--json"])
    assert shown.exit_code == 0
    assert [row["verdict_vs_last_good"] for row in __import__("json").loads(shown.output)][1:] == [
        "no_difference",
        "regressed",
        "regressed",
    ] or shown.output.count("regressed") >= 2


def test_catalog_and_sql_agree_with_the_tables(tmp_path: Path) -> None:
    _synthetic_store(tmp_path, [0, 10])
    cat = catalog(tmp_path)
    assert list(cat["run_id"]) == ["night-0", "night-1"]
    assert list(cat["outcome"]) == ["complete", "complete"]
    assert (cat["conversations"] == cat["done"]).all()
    assert cat["rubrics"].notna().all()
    grades = load_runs(tmp_path, table="grades")
    counted = sql(
        "select run_id, count(*) as n from grades group by run_id order by run_id", tmp_path
    )
    assert counted["n"].tolist() == grades.groupby("run_id").size().sort_index().tolist()
    joined = sql(
        "select r.run_id, count(*) as n from runs r join conversations c using (run_id) "
        "group by r.run_id order by r.run_id",
        tmp_path,
    )
    assert joined["n"].tolist() == cat["conversations"].tolist()
    with pytest.raises(evalkit.StoreError, match="sql over"):
        sql("select nope from grades", tmp_path)


def test_history_says_which_variance_its_alarm_used_the_rule_nightly_alarms_applies(
    tmp_path: Path,
) -> None:
    """history's alarm is :func:`evalkit.nightly_alarms` over the series' runs (one rule), and
    each row says which variance it used and from how many nights; `evalkit history` prints
    it under the series."""
    _synthetic_store(tmp_path, [0, 0, 0, 0, 0, 25])
    frame = evalkit.history(tmp_path)
    assert frame["alarm_variance"].iloc[1].startswith("within night only (short series: 1 night ")
    assert frame["variance_nights"].iloc[1] == 0
    assert math.isnan(frame["between_night_sd"].iloc[1])
    newest = frame.iloc[-1]
    assert newest["alarm"] == "regressed"
    assert newest["alarm_variance"].startswith("within night + between nights (SD ")
    assert newest["variance_nights"] == 5
    assert newest["alarm_se"] >= 0
    assert newest["alarm_z"] < -3.09
    grades = {r: load_run(r, tmp_path).grades() for r in frame["run_id"]}
    alone = evalkit.nightly_alarms(grades).nights
    assert list(frame["alarm"]) == list(alone["alarm"])
    np.testing.assert_allclose(frame["alarm_z"], alone["z"])
    assert list(frame["alarm_variance"].iloc[1:]) == list(alone["variance"].iloc[1:])
    by_rule = evalkit.history(tmp_path, options=evalkit.flows.HistoryOptions(by="rule"))
    assert set(by_rule[by_rule["run_id"] == "night-5"]["alarm_variance"]) == {
        newest["alarm_variance"]
    }
    out = CliRunner().invoke(app, ["history", "--store", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert f"alarm variance (newest run): {newest['alarm_variance']}" in out.output


@pytest.mark.slow
def test_history_gate_stays_quiet_on_unchanged_nights_and_confirms_a_lasting_drop(
    tmp_path: Path,
) -> None:
    """The gate through a real store: A/A nights (same truth) never fail it beyond binomial
    bounds of the rule's per-night rate (<= 1%); a lasting 15-point drop is flagged
    ``suspect`` or ``regressed`` on its first night and fails the gate by its second night.
    (The rule's own calibration is tests/compare/test_nightly_alarms.py.)"""
    from scipy.stats import binom

    trials = 12
    alarms = caught = 0
    for trial in range(trials):
        same = f"memory://calib-{os.getpid()}-{trial}-aa/runs"
        _synthetic_store(same, [0, 0, 0], seed=trial)
        alarms += evalkit.flows.latest_regression(evalkit.history(same)) is not None
        drop = f"memory://calib-{os.getpid()}-{trial}-drop/runs"
        _synthetic_store(drop, [0, 15, 15], seed=trial)
        frame = evalkit.history(drop)
        assert frame["alarm"].iloc[1] in ("suspect", "regressed")
        caught += evalkit.flows.latest_regression(frame) is not None
    print(f"false alarms {alarms}/{trials}; 15-point drop confirmed {caught}/{trials}")
    assert alarms <= binom.ppf(0.999, trials, 0.01)
    assert caught / trials >= 0.9


def test_the_nightly_example_writes_to_a_bucket_and_renders_the_trend() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    workflow = yaml.safe_load((root / "examples" / "nightly.yml").read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    assert job["env"]["RUNS_URL"] == "${{ vars.EVALKIT_RUNS_URL }}"
    keyed = [step for step in job["steps"] if "AWS_SECRET_ACCESS_KEY" in step.get("env", {})]
    assert keyed
    assert all(
        s["env"]["AWS_SECRET_ACCESS_KEY"] == "${{ secrets.AWS_SECRET_ACCESS_KEY }}" for s in keyed
    )
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert '-r store "${RUNS_URL:-$OUT/runs}"' in runs
    assert "'.[s3]'" in runs
    assert 'evalkit history --store "${RUNS_URL:-$OUT/runs}"' in runs
    assert "evalkit report notebooks/nightly_trend.ipynb" in runs
    assert runs.count('-r store "${RUNS_URL:-$OUT/runs}"') == 2  # the comparison and the trend
    assert (root / "notebooks" / "nightly_trend.ipynb").is_file()


def test_history_that_matches_nothing_says_what_the_store_holds_and_fails_the_gate(
    tmp_path: Path,
) -> None:
    _synthetic_store(tmp_path, [0, 0])
    runner = CliRunner()
    typo = runner.invoke(app, ["history", "--store", str(tmp_path), "--assistant", "asst_2"])
    assert typo.exit_code == 0, typo.output
    assert "match --assistant asst_2" in typo.output
    assert "assistants: asst_1" in typo.output
    gate = runner.invoke(
        app,
        ["history", "--store", str(tmp_path), "--assistant", "asst_2", "--fail-on-regression"],
    )
    assert gate.exit_code == 1, gate.output  # a CI gate that checked nothing fails
