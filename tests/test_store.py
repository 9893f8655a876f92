"""The run store: manifest, journal durability, resume, parquet tables and DataFrame loaders."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalkit.api._events import TranscriptTurn, Turn
from evalkit.store import (
    GRADES_SCHEMA,
    ConversationRecord,
    CorruptRunError,
    IdentityMismatchError,
    Run,
    RunExistsError,
    RunLockedError,
    RunNotFoundError,
    RunWriter,
    StoreError,
    TurnRecord,
    _journal,
    _tables,
    dump_variables,
    finalize_run,
    identity_hash,
    list_runs,
    load_run,
    load_runs,
    transcript_hash,
)

from .runner_support import CONVERSATION_DTYPES, TURN_DTYPES
from .waiting import wait_until

T0 = datetime(2026, 11, 1, 9, 30, 15, 123456, tzinfo=UTC)
URDU = "السلام علیکم، کل صبح دس بجے آپ کی اپائنٹمنٹ ہے۔"
EMOJI = "ٹھیک ہے 👍🏽 thanks! 😀"

GRADE_COLUMNS = list(GRADES_SCHEMA.names)
assert GRADE_COLUMNS[:2] == ["run_id", "conversation_id"]


def manifest(identity: str = "grid-a", **extra: Any) -> dict[str, Any]:
    return {"identity": identity_hash({"grid": identity}), "assistant_id": "asst_1", **extra}


def turns_for(i: int, n: int = 3) -> list[TurnRecord]:
    texts = [URDU, EMOJI, f"caller line {i}"]
    return [
        TurnRecord(k, "agent" if k % 2 else "caller", texts[(k - 1) % 3]) for k in range(1, n + 1)
    ]


def record(i: int, run_id: str = "r1", **overrides: Any) -> ConversationRecord:
    n = overrides.pop("n_turns", 3)
    values: dict[str, Any] = {
        "run_id": run_id,
        "conversation_id": f"conv-{i:03d}",
        "cell_id": f"cell-{i // 2:03d}",
        "repeat": i % 2,
        "persona_label": "Busy caller",
        "variables": dump_variables({"name": "علی", "slot": "10:00"}),
        "context": None if i % 2 else "Clinic reminder",
        "status": "done",
        "error_message": None,
        "attempts": 1,
        "n_turns": n,
        "ended_by": "agent" if n % 2 else ("caller" if n else None),
        "first_turn_s": 0.25 if n else None,
        "duration_s": 12.5,
        "started_at": T0 + timedelta(seconds=i),
        "finished_at": T0 + timedelta(seconds=i + 12.5),
        "transcript_hash": transcript_hash(turns_for(i, n)) if n else None,
        "assistant_version": 4,
        "target": "draft",
        "persona_id": f"persona-{i % 4}",
    }
    values.update(overrides)
    return ConversationRecord(**values)


def write_run(
    store: Path, run_id: str, ids: range, *, finalize: bool = True, **man: Any
) -> RunWriter | Run:
    writer = RunWriter.create(store, run_id, manifest(**man), fsync=False)
    for i in ids:
        writer.append(record(i, run_id), turns_for(i))
    if finalize:
        return writer.finalize()
    writer.close()
    return writer


def journal_lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_bytes().splitlines()]


# --------------------------------------------------------------------------- records, hashes


def test_transcript_hash_depends_on_roles_and_texts_only() -> None:
    turns = turns_for(1)
    expected = hashlib.sha256(
        json.dumps(
            [[t.role, t.text] for t in turns], ensure_ascii=False, separators=(",", ":")
        ).encode()
    ).hexdigest()
    assert transcript_hash(turns) == expected
    assert transcript_hash([(t.index, t.role, t.text) for t in turns]) == expected
    assert transcript_hash([(t.role, t.text) for t in turns]) == expected
    assert transcript_hash([Turn(t.index + 5, t.role, t.text) for t in turns]) == expected
    assert transcript_hash([TranscriptTurn(t.role, t.text) for t in turns]) == expected
    assert transcript_hash([(t.role, t.text + " ") for t in turns]) != expected


def test_identity_hash_is_canonical() -> None:
    a = identity_hash({"grid": {"b": [1, 2], "a": "کل"}, "target": "draft"})
    b = identity_hash({"target": "draft", "grid": {"a": "کل", "b": [1, 2]}})
    assert a == b
    assert len(a) == 64
    assert identity_hash({"grid": {"a": "کل", "b": [2, 1]}, "target": "draft"}) != a
    canonical = '{"grid":{"a":"کل","b":[1,2]},"target":"draft"}'
    assert a == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "finished"}, "status"),
        ({"ended_by": "bot"}, "ended_by"),
        ({"started_at": datetime(2026, 1, 1)}, "started_at"),
        ({"repeat": -1}, "repeat"),
        ({"n_turns": 2}, "n_turns"),
        ({"run_id": "other"}, "run_id"),
    ],
)
def test_append_rejects_bad_records(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    with RunWriter.create(tmp_path, "r1", manifest()) as writer:
        bad = record(1)
        for name, value in change.items():
            setattr(bad, name, value)
        with pytest.raises(ValueError, match=message):
            writer.append(bad, turns_for(1))
        with pytest.raises(ValueError, match="role"):
            writer.append(record(2), [(1, "agent", "a"), (2, "bot", "b"), (3, "agent", "c")])
        with pytest.raises(ValueError, match="increase"):
            writer.append(record(3), [(1, "agent", "a"), (1, "caller", "b"), (3, "agent", "c")])
        assert len(writer) == 0
    assert (tmp_path / "r1" / "journal.jsonl").read_bytes() == b""


# --------------------------------------------------------------------------- round trip


def test_round_trip_keeps_every_value_and_dtype(tmp_path: Path) -> None:
    tricky = 'quote " backslash \\ newline \n tab \t line-sep \u2028 end'
    records = [
        record(0),
        record(1, status="error", error_message=f"{URDU} {EMOJI}", n_turns=2, context=tricky),
        record(
            2,
            status="failed",
            error_message="503 after retries",
            attempts=3,
            n_turns=0,
            assistant_version=None,
            persona_id=None,
            started_at=datetime(2026, 11, 1, 14, 30, tzinfo=timezone(timedelta(hours=5))),
        ),
        record(3, status="dropped", n_turns=1, first_turn_s=float("nan"), duration_s=None),
    ]
    turns = {r.conversation_id: turns_for(int(r.conversation_id[-3:]), r.n_turns) for r in records}
    turns["conv-001"] = [TurnRecord(1, "agent", tricky), TurnRecord(2, "caller", EMOJI)]
    records[1].transcript_hash = transcript_hash(turns["conv-001"])
    with RunWriter.create(tmp_path, "r1", manifest()) as writer:
        for rec in records:
            writer.append(rec, turns[rec.conversation_id])
        run = writer.finalize()

    conv = load_run("r1", store=tmp_path).conversations
    assert conv.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES
    assert list(conv["conversation_id"]) == ["conv-000", "conv-001", "conv-002", "conv-003"]
    for rec, row in zip(records, conv.to_dict("records"), strict=True):
        for name in CONVERSATION_DTYPES:
            expected = getattr(rec, name)
            got = row[name]
            if name in ("started_at", "finished_at"):
                assert got == pd.Timestamp(expected)
                assert str(got.tz) == "UTC"
            elif expected is None or (isinstance(expected, float) and expected != expected):
                assert pd.isna(got), name
            else:
                assert got == expected, name
    assert conv.loc[2, "started_at"] == pd.Timestamp("2026-11-01 09:30:00", tz="UTC")

    tr = run.turns
    assert tr.dtypes.astype(str).to_dict() == TURN_DTYPES
    expected_turns = [
        (rec.conversation_id, t.index, t.role, t.text)
        for rec in records
        for t in turns[rec.conversation_id]
    ]
    got_turns = list(tr[["conversation_id", "index", "role", "text"]].itertuples(index=False))
    assert [tuple(t) for t in got_turns] == expected_turns
    assert (tr["run_id"] == "r1").all()

    # the journal replay (crashed run) gives identical frames
    for name in ("conversations.parquet", "turns.parquet"):
        (run.path / name).unlink()
    replayed = load_run(run.path)
    pd.testing.assert_frame_equal(replayed.conversations, conv)
    pd.testing.assert_frame_equal(replayed.turns, tr)
    assert replayed.from_journal

    # and the writer's replay gives back equal records
    with RunWriter.resume(tmp_path, "r1", manifest()) as writer:
        again = writer.records()
    assert again["conv-000"] == records[0]
    assert again["conv-001"] == records[1]


def test_empty_tables_have_the_same_dtypes(tmp_path: Path) -> None:
    run = RunWriter.create(tmp_path, "empty", manifest()).finalize()
    assert run.manifest["counts"] == {"total": 0, "done": 0, "error": 0, "dropped": 0, "failed": 0}
    assert run.conversations.empty
    assert run.conversations.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES
    assert run.turns.dtypes.astype(str).to_dict() == TURN_DTYPES
    grades = run.grades()
    assert list(grades.columns) == GRADE_COLUMNS
    assert grades.empty
    stacked = load_runs(tmp_path, table="turns")
    assert stacked.dtypes.astype(str).to_dict() == TURN_DTYPES


def test_frames_survive_a_pandas_parquet_round_trip(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r1", range(4))
    assert isinstance(run, Run)
    for frame in (run.conversations, run.turns):
        frame.to_parquet(tmp_path / "copy.parquet")
        back = pd.read_parquet(tmp_path / "copy.parquet")
        pd.testing.assert_frame_equal(back, frame)


# --------------------------------------------------------------------------- durability


def test_torn_last_line_is_ignored_then_cut_before_the_next_append(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", range(3), finalize=False)
    journal = tmp_path / "r1" / "journal.jsonl"
    whole = journal.read_bytes()
    torn = encode_partial(record(3), turns_for(3))
    journal.write_bytes(whole + torn)

    crashed = load_run("r1", tmp_path)  # readers ignore the torn line
    assert list(crashed.conversations["conversation_id"]) == ["conv-000", "conv-001", "conv-002"]
    assert journal.read_bytes() == whole + torn  # and do not touch the file

    with RunWriter.resume(tmp_path, "r1", manifest()) as writer:
        assert writer.finished == {"conv-000", "conv-001", "conv-002"}
        assert journal.read_bytes() == whole
        writer.append(record(3), turns_for(3))
        run = writer.finalize()
    assert [line["conversation"]["conversation_id"] for line in journal_lines(run.path)] == [
        "conv-000",
        "conv-001",
        "conv-002",
        "conv-003",
    ]
    assert len(run.conversations) == 4
    assert len(run.turns) == 12


def encode_partial(rec: ConversationRecord, turns: list[TurnRecord]) -> bytes:
    line = _journal.encode_line(rec, turns)
    return line[: len(line) // 2]


def test_failed_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    writer.append(record(0), turns_for(0))
    journal = tmp_path / "r1" / "journal.jsonl"
    before = journal.read_bytes()
    real_write = os.write

    def half_then_fail(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.write", half_then_fail)
    with pytest.raises(StoreError, match="No space left"):
        writer.append(record(1), turns_for(1))
    monkeypatch.undo()
    assert journal.read_bytes() == before
    assert "conv-001" not in writer.finished
    writer.append(record(1), turns_for(1))
    run = writer.finalize()
    assert len(journal_lines(run.path)) == 2


def test_parquet_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    for i in range(3):
        writer.append(record(i), turns_for(i))
    writer.finalize(close=False)
    table_path = tmp_path / "r1" / "conversations.parquet"
    good = table_path.read_bytes()
    writer.append(record(3), turns_for(3))

    def crash_mid_write(table: pa.Table, where: Any, **kwargs: Any) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr("pyarrow.parquet.write_table", crash_mid_write)
    with pytest.raises(KeyboardInterrupt):
        writer.finalize(close=False)
    monkeypatch.undo()
    assert table_path.read_bytes() == good  # the old table, whole
    assert sorted(p.name for p in table_path.parent.iterdir()) == [
        "conversations.parquet",
        "journal.jsonl",
        "manifest.json",
        "turns.parquet",
    ]
    # a temp file left by a hard crash (no cleanup) is invisible to readers ...
    stale = table_path.parent / ".conversations.parquet.999-dead.tmp"
    stale.write_bytes(b"PAR1 torn")
    assert len(load_run(table_path.parent).conversations) == 4  # journal is newer: replayed
    writer.close()
    # ... and removed by the next writer
    with RunWriter.resume(tmp_path, "r1", manifest()) as again:
        assert not stale.exists()
        run = again.finalize()
    assert not run.from_journal
    assert len(run.conversations) == 4


def test_resume_skips_finished_and_never_duplicates(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", range(5), finalize=False)
    with RunWriter.open(tmp_path, "r1", manifest()) as writer:
        assert writer.finished == {f"conv-{i:03d}" for i in range(5)}
        assert "conv-004" in writer
        assert writer.records()["conv-002"] == record(2)
        for i in range(10):
            if f"conv-{i:03d}" not in writer.finished:
                writer.append(record(i), turns_for(i))
        # the runner re-runs a conversation: the last line wins
        writer.append(record(3, status="error", error_message="boom", attempts=2), turns_for(3))
        assert writer.records()["conv-003"].status == "error"
        run = writer.finalize()
    conv = run.conversations
    assert len(conv) == 10
    assert conv["conversation_id"].is_unique
    assert conv.set_index("conversation_id").loc["conv-003", "status"] == "error"
    assert len(run.turns) == 30
    assert not run.turns.duplicated(["conversation_id", "index"]).any()
    assert run.manifest["journal"] == {
        "bytes": (run.path / "journal.jsonl").stat().st_size,
        "lines": 11,
        "superseded": 1,
    }
    assert run.manifest["counts"]["error"] == 1
    assert run.manifest["resumed_at"]


def test_identity_mismatch_is_refused(tmp_path: Path) -> None:
    write_run(tmp_path, "r1", range(2))
    stored = manifest()["identity"]
    other = manifest("grid-b")
    for opener in (RunWriter.resume, RunWriter.open, RunWriter.create):
        with pytest.raises(IdentityMismatchError) as info:
            opener(tmp_path, "r1", other)
        message = str(info.value)
        assert info.value.stored == stored
        assert info.value.requested == other["identity"]
        assert stored not in message  # the runner says what changed, in words
        assert str(tmp_path / "r1") in message
    with pytest.raises(RunExistsError, match="resume"):
        RunWriter.create(tmp_path, "r1", manifest())
    with pytest.raises(ValueError, match="identity"):
        RunWriter.open(tmp_path, "r2", {"assistant_id": "a"})
    with pytest.raises(ValueError, match="run_id"):
        RunWriter.open(tmp_path, "../escape", manifest())
    assert len(load_run("r1", tmp_path).conversations) == 2  # untouched


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    with pytest.raises(RunLockedError, match=r"journal\.jsonl"):
        RunWriter.resume(tmp_path, "r1", manifest())
    writer.close()
    RunWriter.resume(tmp_path, "r1", manifest()).close()


def test_crashed_run_loads_from_the_journal(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    for i in range(4):
        writer.append(record(i), turns_for(i))
    # no finalize, no close: as if the process died
    run = load_run(tmp_path / "r1")
    assert run.from_journal
    assert len(run.conversations) == 4
    assert len(run.turns) == 12
    assert run.counts == {"total": 4, "done": 4, "error": 0, "dropped": 0, "failed": 0}
    writer.close()

    # finalized tables older than the journal are not trusted either
    finalize_run("r1", tmp_path)
    with RunWriter.resume(tmp_path, "r1", manifest()) as more:
        more.append(record(4), turns_for(4))
    stale = load_run("r1", tmp_path)
    assert stale.from_journal
    assert len(stale.conversations) == 5
    fresh = finalize_run("r1", tmp_path)
    assert fresh.manifest["counts"]["total"] == 5
    assert not fresh.from_journal
    assert len(fresh.turns) == 15


def test_concurrent_appends_make_a_valid_journal(tmp_path: Path) -> None:
    n_threads, per_thread = 8, 40
    writer = RunWriter.create(tmp_path, "r1", manifest())
    barrier = threading.Barrier(n_threads)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            barrier.wait()
            for k in range(per_thread):
                i = t * per_thread + k
                writer.append(record(i), turns_for(i))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors

    async def from_coroutines() -> None:
        async def one(i: int) -> None:
            writer.append(record(i), turns_for(i))

        await asyncio.gather(*(one(1000 + i) for i in range(10)))
        await asyncio.gather(
            *(writer.aappend(record(2000 + i), turns_for(2000 + i)) for i in range(10))
        )

    asyncio.run(from_coroutines())
    run = writer.finalize()
    lines = journal_lines(run.path)
    total = n_threads * per_thread + 20
    assert len(lines) == total
    assert len({line["conversation"]["conversation_id"] for line in lines}) == total
    assert len(run.conversations) == total
    assert len(run.turns) == 3 * total


# --------------------------------------------------------------------------- secrets, errors


def test_no_api_key_is_ever_written(tmp_path: Path) -> None:
    key = "sk_api_" + "Zq9" * 10 + "LAST"
    provider_key = "sk-proj-provider-secret-9876"
    man = manifest(
        config_snapshot={
            "llm": {"provider": "openai", "apiKey": provider_key},
            "notes": [f"rotated {key}", {"deep": {"headers": [key]}}],
        },
        base_url_host="127.0.0.1",
    )
    writer = RunWriter.create(tmp_path, "r1", man)
    leaky = record(0, error_message=f"401 for key {key}", n_turns=1)
    writer.append(leaky, [TurnRecord(1, "agent", f"my key is {key}")])
    with pytest.raises(ValueError, match="n_turns"):
        writer.append(record(1), [])
    writer.append(record(1, n_turns=1), [TurnRecord(1, "agent", "hi")])
    run = writer.finalize({"client": {"api_key": key}})
    for path in run.path.rglob("*"):
        data = path.read_bytes()
        assert key.encode() not in data, path
        assert b"Zq9Zq9" not in data, path
        assert provider_key.encode() not in data, path
    assert run.manifest["config_snapshot"]["llm"]["apiKey"] == "…9876"
    assert str(run.turns.loc[0, "text"]).startswith("my key is sk_api_…")


def test_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError, match="nope"):
        load_run("nope", tmp_path)
    (tmp_path / "bare").mkdir()
    with pytest.raises(RunNotFoundError, match=r"manifest\.json"):
        load_run(tmp_path / "bare")

    write_run(tmp_path, "broken", range(1))
    manifest_path = tmp_path / "broken" / "manifest.json"
    manifest_path.write_text('{"run_id": "broken", ')
    with pytest.raises(CorruptRunError, match=re.escape(str(manifest_path))):
        load_run("broken", tmp_path)

    write_run(tmp_path, "garbled", range(3), finalize=False)
    journal = tmp_path / "garbled" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(lines[0] + b'{"v":1,"conversation":\n' + lines[2])
    with pytest.raises(CorruptRunError, match=r"journal\.jsonl: line 2"):
        _ = load_run("garbled", tmp_path).conversations
    with pytest.raises(CorruptRunError, match="line 2"):
        RunWriter.resume(tmp_path, "garbled", manifest())


def test_list_runs_skips_a_corrupt_manifest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_run(tmp_path, "good", range(1))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("not json")
    runs = list_runs(tmp_path)
    assert list(runs["run_id"]) == ["good"]
    assert "bad" in caplog.text


# --------------------------------------------------------------------------- many runs


def test_list_runs_and_load_runs(tmp_path: Path) -> None:
    write_run(tmp_path, "nightly-2", range(2), created_at="2026-11-02T02:00:00+00:00")
    write_run(tmp_path, "nightly-1", range(3), created_at="2026-11-01T02:00:00+00:00")
    write_run(
        tmp_path, "nightly-3", range(1), finalize=False, created_at="2026-11-03T02:00:00+00:00"
    )
    runs = list_runs(tmp_path)
    assert list(runs["run_id"]) == ["nightly-1", "nightly-2", "nightly-3"]
    assert str(runs["created_at"].dtype) == "datetime64[us, UTC]"
    # a run never finalized (killed) is counted from its journal
    assert list(runs["n_conversations"]) == [3, 2, 1]
    assert list(runs["finalized"]) == [True, True, False]
    assert list(runs["done"].iloc[:2]) == [3, 2]
    assert (runs["assistant_id"] == "asst_1").all()
    assert list(runs["path"]) == [str(tmp_path / f"nightly-{i}") for i in (1, 2, 3)]

    history = load_runs(tmp_path)
    assert load_runs(store=tmp_path).equals(history)
    assert history.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES
    assert history.groupby("run_id").size().to_dict() == {
        "nightly-1": 3,
        "nightly-2": 2,
        "nightly-3": 1,
    }
    assert list(history["run_id"].unique()) == ["nightly-1", "nightly-2", "nightly-3"]
    turns = load_runs(["nightly-2", tmp_path / "nightly-3"], table="turns", store=tmp_path)
    assert turns.groupby("run_id").size().to_dict() == {"nightly-2": 6, "nightly-3": 3}
    assert load_runs(load_run("nightly-1", tmp_path), table="grades").empty
    with pytest.raises(ValueError, match="table"):
        load_runs(tmp_path, table="bogus")  # type: ignore[arg-type]

    assert list_runs(tmp_path / "missing").empty
    assert list(list_runs(tmp_path / "missing").columns) == list(runs.columns)


def test_grades_and_transcript(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r1", range(2))
    assert isinstance(run, Run)
    rows = [
        {
            "run_id": "r1",
            "conversation_id": f"conv-00{i}",
            "rubric_version_id": rubric,
            "rule_id": "urdu-script",
            "title": "Agent answers in Urdu",
            "points": 25.0,
            "verdict": "pass",
            "points_awarded": 25.0,
            "rationale": None,
            "evidence_turn": None if i else 1,
            "grader": "script",
        }
        for i in range(2)
        for rubric in ("card-a", "card-b")
    ]
    (run.path / "grades").mkdir()
    table = pa.Table.from_pylist(rows, schema=GRADES_SCHEMA)
    _tables.write_parquet_atomic(table, run.path / "grades" / "card.parquet")
    (run.path / "grades" / ".card.parquet.1-ab.tmp").write_bytes(b"torn")
    grades = run.grades()
    assert list(grades.columns) == GRADE_COLUMNS
    assert len(grades) == 4
    assert str(grades["evidence_turn"].dtype) == "Int64"
    assert str(grades["rationale"].dtype) == "str"
    assert set(run.grades("card-a")["rubric_version_id"]) == {"card-a"}

    transcript = run.transcript("conv-001")
    assert list(transcript["index"]) == [1, 2, 3]
    assert list(transcript["text"]) == [t.text for t in turns_for(1)]
    with pytest.raises(KeyError, match="conv-999"):
        run.transcript("conv-999")


# --------------------------------------------------------------------------- SIGKILL


CHILD = textwrap.dedent(
    """
    import sys
    import time
    from datetime import UTC, datetime
    from evalkit.store import ConversationRecord, RunWriter, TurnRecord, identity_hash

    store, total = sys.argv[1], int(sys.argv[2])
    manifest = {"identity": identity_hash({"grid": "kill"})}
    writer = RunWriter.open(store, "killed", manifest)
    print("ready", len(writer.finished), flush=True)
    for i in range(total):
        cid = f"c{i:05d}"
        if cid in writer:
            continue
        turns = [TurnRecord(k, "agent" if k % 2 else "caller", f"{cid} {k} " + "ب" * 2000)
                 for k in range(1, 6)]
        now = datetime.now(UTC)
        writer.append(
            ConversationRecord(run_id="killed", conversation_id=cid, cell_id=f"cell{i}",
                               repeat=0, persona_label="p", variables="{}", status="done",
                               n_turns=5, started_at=now, finished_at=now, target="draft"),
            turns,
        )
        time.sleep(0.002)  # a real run is slower still; leaves time to kill it part-way
    writer.finalize()
    print("finished", flush=True)
    """
)


def _run_child(store: Path, total: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store), str(total)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _complete_lines(journal: Path) -> int:
    return journal.read_bytes().count(b"\n") if journal.exists() else 0


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    total = 600
    journal = tmp_path / "killed" / "journal.jsonl"
    for kill_after in (40, 200):
        child = _run_child(tmp_path, total)
        assert child.stdout is not None
        assert child.stdout.readline().startswith("ready")
        wait_until(
            lambda: _complete_lines(journal) >= kill_after,  # noqa: B023 - called at once
            60,
            what=f"{kill_after} journal lines",
            interval=0.002,
        )
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL
        assert _complete_lines(journal) < total  # killed part-way
        seen = [line["conversation"]["conversation_id"] for line in journal_lines_tolerant(journal)]
        assert len(seen) == len(set(seen))  # a resumed child never re-appends

    child = _run_child(tmp_path, total)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.splitlines()[-1] == "finished"
    run = load_run("killed", tmp_path)
    assert not run.from_journal
    conv = run.conversations
    assert sorted(conv["conversation_id"]) == [f"c{i:05d}" for i in range(total)]
    assert run.manifest["journal"]["superseded"] == 0
    per_conversation = run.turns.groupby("conversation_id").size()
    assert (per_conversation == 5).all()
    assert len(per_conversation) == total


def journal_lines_tolerant(journal: Path) -> list[dict[str, Any]]:
    """Complete lines only (a torn tail from the kill is allowed)."""
    data = journal.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def test_pq_files_are_plain_parquet(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r1", range(2))
    assert isinstance(run, Run)
    table = pq.read_table(run.path / "turns.parquet")
    assert table.num_rows == 6
    assert (
        table.schema.metadata[b"evalkit.journal_bytes"]
        == str((run.path / "journal.jsonl").stat().st_size).encode()
    )
