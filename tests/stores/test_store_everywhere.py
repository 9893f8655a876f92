"""Every ``store=`` takes a URL, checked against moto's S3 server on loopback: the grading's
note survives the writer's finalize, ``refine`` (Python and ``evalkit refine --store``) and
``evalkit snapshot --store`` take a bucket and never make a local folder named after it,
``history`` keeps its ``storage_options``, the catalog's index stays exact, and writers racing
to create one run id in S3 never both win."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalkit
from evalkit import Client
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.flows import HistoryOptions
from evalkit.grading import grade_run
from evalkit.refine import RefineLoopOptions, RefineOptions, refine_loop
from evalkit.runner import RunOptions
from evalkit.store import RunWriter, catalog, list_runs, load_run, local_folder
from evalkit.targets import SnapshotStore

from ..refine.conftest import (  # noqa: F401  (client, emu: the refine tests' emulator fixtures)
    FAST_POLL,
    NASTALIQ_FEEDBACK,
    SCORECARD,
    client,
    demo_grid,
    emu,
    make_demo,
)
from ..test_store import manifest, record, turns_for
from .nights import scorecard


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder, and a local cache for what a URL store keeps on the machine."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    return work


@pytest.mark.parametrize("where", ["folder", "s3"])
def test_a_grading_note_written_while_the_writer_is_open_survives_finalize(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = str(tmp_path / "runs") if where == "folder" else request.getfixturevalue("bucket")
    writer = RunWriter.create(store, "nightly", manifest(), fsync=False)
    for i in range(4):
        writer.append(record(i, "nightly"), turns_for(i))
    card = scorecard()
    graded = grade_run(load_run("nightly", store), card, judge=False)  # while the writer is open
    assert len(graded.frame)
    noted = load_run("nightly", store).manifest["grades"][card.rubric_version_id]
    for i in range(4, 6):
        writer.append(record(i, "nightly"), turns_for(i))
    writer.finalize({"outcome": "complete"})
    stored = load_run("nightly", store).manifest
    assert stored["grades"] == {card.rubric_version_id: noted}  # not the writer's older copy
    assert stored["counts"]["total"] == 6
    row = catalog(store).iloc[0]
    assert row["rubrics"] == card.rubric_version_id
    assert row[f"mean_score.{card.rubric_version_id}"] == pytest.approx(noted["mean_score"])
    # finalized again later (finalize_run after a resume), the note is still there
    again = RunWriter.resume(store, "nightly", manifest(), fsync=False)
    again.finalize()
    assert load_run("nightly", store).manifest["grades"] == {card.rubric_version_id: noted}


@pytest.mark.slow
def test_the_refine_loop_and_evalkit_refine_write_their_runs_to_a_bucket(
    emu: EmulatorServer,  # noqa: F811
    client: Client,  # noqa: F811
    bucket: str,
    cwd: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo = make_demo(emu, client, bucket)  # prod's snapshot in the bucket
    grid = demo_grid(repeats=1).sample(6, seed=2)
    options = RefineLoopOptions(
        rounds=1, holdout=0.3, seed=3, run_prefix="loop", refine=RefineOptions(poll=FAST_POLL)
    )
    result = refine_loop(
        grid,
        demo.assistant_id,
        SCORECARD,
        feedback=NASTALIQ_FEEDBACK,
        client=client,
        judge=False,
        store=bucket,
        options=options,
    )
    assert list(result.rounds["round"]) == [0, 1]
    runs = list_runs(bucket)
    assert set(runs["run_id"]) == {"loop-prod", "loop-r0", "loop-r1"}
    assert runs["path"].str.startswith(bucket).all()
    assert set(catalog(bucket).dropna(subset=["rubrics"])["run_id"]) == set(runs["run_id"])

    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    args = ["refine", "-a", demo.assistant_id, "--suggest-from", "loop-r1", "--store", bucket]
    done = CliRunner().invoke(app, [*args, "--poll-interval", "0.02"])
    assert done.exit_code == 0, done.output
    assert "version 3 -> 4" in done.output
    snap = CliRunner().invoke(app, ["snapshot", "-a", demo.assistant_id, "--store", bucket])
    assert snap.exit_code == 0, snap.output
    assert list(cwd.iterdir()) == []  # never a folder named "s3:" in the working folder
    cached = local_folder(bucket)
    assert 4 in SnapshotStore(bucket).versions(demo.assistant_id)  # in the bucket, for all
    assert not (cached / ".snapshots").exists()
    assert (cached / ".refine").is_dir()  # the in-flight record stays on this machine
    import s3fs

    fs = s3fs.S3FileSystem(use_listings_cache=False)
    objects = fs.find(bucket.removeprefix("s3://"))
    assert len(objects) > 20
    secrets_seen = [os.environ["AWS_SECRET_ACCESS_KEY"], emu.api_key]
    for key, data in fs.cat(objects).items():  # nothing secret in any object of the store
        assert not any(secret.encode() in data for secret in secrets_seen), key


def test_history_at_a_url_keeps_its_storage_options(
    emu: EmulatorServer,  # noqa: F811
    s3_endpoint: str,
    bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalkit.runner import run_grid

    from ..runner_support import build_assistant, load_grid

    assistant = build_assistant(emu)
    with Client(emu.base_url, emu.api_key) as c:
        for night in range(2):
            run = run_grid(
                load_grid(2, 2),
                assistant,
                client=c,
                store=bucket,
                run_id=f"n{night}",
                options=RunOptions(progress=False),
            )
            grade_run(run, scorecard(), judge=False)
    expected = evalkit.history(bucket)
    assert list(expected["run_id"]) == ["n0", "n1"]
    # the environment now points nowhere: only storage_options reach the server
    options = {
        "endpoint_url": s3_endpoint,
        "key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
        "use_listings_cache": False,
        "skip_instance_cache": True,
        "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2},
    }
    import s3fs

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    s3fs.S3FileSystem.clear_instance_cache()  # a store opened without options now fails
    got = evalkit.history(bucket, options=HistoryOptions(storage_options=options))
    cols = ["run_id", "score", "score_low", "score_high", "verdict_vs_previous"]
    pd.testing.assert_frame_equal(got[cols], expected[cols])


def test_the_catalog_at_a_url_reads_its_index_and_stays_exact(
    bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import s3fs

    from evalkit.store import RemotePath, open_store, record_grades_summary

    for i in range(5):
        with RunWriter.create(bucket, f"r{i}", manifest(), fsync=False) as writer:
            for k in range(2):
                writer.append(record(k, f"r{i}"), turns_for(k))
            if i != 4:  # r4 stays unfinalized (a killed run)
                writer.finalize({"outcome": "complete"})
    fs = s3fs.S3FileSystem(use_listings_cache=False)
    key = bucket.removeprefix("s3://")
    assert sorted(fs.ls(f"{key}/.catalog", refresh=True)) == [
        f"{key}/.catalog/r{i}.json" for i in range(5)
    ]
    first = catalog(bucket)  # every copy fetched, then the snapshot saved
    assert fs.exists(f"{key}/.catalog/~snapshot.json")

    fetched: list[str] = []
    original = RemotePath.read_many

    def counting(self: RemotePath, paths: list[RemotePath]) -> dict[RemotePath, bytes]:
        fetched.extend(p.name for p in paths)
        return original(self, paths)

    monkeypatch.setattr(RemotePath, "read_many", counting)
    second = catalog(bucket)
    assert fetched == []  # nothing but two listings and the snapshot
    pd.testing.assert_frame_equal(first, second)
    assert second["outcome"].tolist() == ["complete"] * 4 + ["interrupted"]

    record_grades_summary(open_store(bucket) / "r2", "card@v1", 2, 75.0)  # one run changed
    third = catalog(bucket)
    assert fetched == ["r2.json"]
    assert third.loc[2, "mean_score.card@v1"] == 75.0
    assert third["mean_score.card@v1"].isna().sum() == 4

    fs.rm(f"{key}/.catalog/r3.json")  # no copy (a process killed before it): its manifest
    fs.rm(f"{key}/r0", recursive=True)  # a deleted run is gone from the catalog
    fs.pipe(f"{key}/.catalog/~snapshot.json", b"{not json")  # a torn snapshot is ignored
    fetched.clear()
    fourth = catalog(bucket)
    assert fourth["run_id"].tolist() == ["r1", "r2", "r3", "r4"]
    assert sorted(fetched) == ["manifest.json", "r1.json", "r2.json", "r4.json"]
    same = [c for c in third.columns if c != "path"]
    pd.testing.assert_frame_equal(
        fourth[same].reset_index(drop=True), third[same].iloc[1:].reset_index(drop=True)
    )


def test_writers_racing_to_create_one_run_id_in_s3_exactly_one_wins(bucket: str) -> None:
    """Eight writers released at once on each of five run ids, on the S3 protocol: the
    conditional create (If-None-Match) lets exactly one create each run."""
    import threading

    from evalkit.store import RunExistsError, RunLockedError

    for attempt in range(5):
        run_id = f"race-{attempt}"
        gate = threading.Barrier(8)
        won: list[RunWriter] = []
        refused: list[BaseException] = []

        def create(
            run_id: str = run_id,
            gate: threading.Barrier = gate,
            won: list[RunWriter] = won,
            refused: list[BaseException] = refused,
        ) -> None:
            gate.wait()
            try:
                won.append(RunWriter.create(bucket, run_id, manifest(), fsync=False))
            except (RunExistsError, RunLockedError) as exc:
                refused.append(exc)

        threads = [threading.Thread(target=create) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(won) == 1, (run_id, len(won), refused)
        assert len(refused) == 7
        won[0].append(record(0, run_id), turns_for(0))
        won[0].finalize()
        assert load_run(run_id, bucket).conversations["conversation_id"].tolist() == ["conv-000"]


def test_the_compare_notebooks_request_reads_its_runs_from_a_bucket(
    emu: EmulatorServer,  # noqa: F811
    bucket: str,
    cwd: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What compare_draft_prod.ipynb calls with ``store`` a bucket: the two runs read from S3,
    graded with the emulated judge (the environment's judge, as the notebook's), compared;
    the grades land in the bucket runs and nothing in the working folder."""
    from evalkit.flows import ComparisonRequest, compare_request

    from .nights import run_nights

    run_nights(emu, bucket, 2)
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "emulator-judge")
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", emu.judge_base_url)
    request = ComparisonRequest(
        store=bucket, scorecard=SCORECARD, baseline_run="night-00", candidate_run="night-01"
    )
    outcome = compare_request(request)
    assert str(outcome.baseline.path) == f"{bucket}/night-00"
    assert str(outcome.candidate.path) == f"{bucket}/night-01"
    assert outcome.comparison.verdict in ("no_difference", "insufficient_evidence")
    judged = load_run("night-01", bucket).grades()
    assert judged["grader"].str.startswith("emulated-judge:").any()
    assert list(cwd.iterdir()) == []


def test_sql_at_a_url_loads_and_downloads_no_duckdb_extension(
    bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.store import sql

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # where DuckDB would install an extension
    for i in range(2):
        with RunWriter.create(bucket, f"r{i}", manifest(), fsync=False) as writer:
            for k in range(3):
                writer.append(record(k, f"r{i}"), turns_for(k))
            writer.finalize({"outcome": "complete"})
    got = sql(
        "select (select count(*) from conversations) as n, (select count(*) from "
        "duckdb_extensions() where loaded and extension_name in ('httpfs', 'aws')) as remote",
        bucket,
    )
    assert got["n"].iloc[0] == 6
    assert got["remote"].iloc[0] == 0
    assert not any(home.rglob("*.duckdb_extension"))
