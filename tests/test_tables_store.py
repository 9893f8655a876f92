"""Run tables for analysts: persona tags, variables as columns, old runs, file modes, load_runs."""

from __future__ import annotations

import inspect
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from evalkit.store import (
    ConversationRecord,
    Run,
    RunWriter,
    dump_tags,
    dump_variables,
    expand_variables,
    grades_frame,
    grades_path,
    load_run,
    load_runs,
    write_grades,
)
from evalkit.targets._snapshots import ConfigSnapshot, SnapshotStore

from .runner_support import CONVERSATION_DTYPES
from .test_store import manifest, record, turns_for

VARIABLES: list[dict[str, Any]] = [
    {"name": "Ali", "account": "0012", "age": 30, "vip": True, "score": 1.5, "slots": ["10:00"]},
    {"name": "Sara", "account": "0345", "age": 41, "vip": False, "score": 2},
    {"name": "Ali", "account": "0012", "age": 30, "vip": True, "score": 1.5, "slots": ["10:00"]},
    {"account": "0999", "age": None},
]
TAGS: list[list[str] | None] = [["angry", "urdu"], [], ["angry", "urdu"], None]


def tagged_run(store: Path, run_id: str = "r1", **man: Any) -> Run:
    """Four conversations with ``VARIABLES`` and ``TAGS`` (the last: tags unknown)."""
    with RunWriter.create(store, run_id, manifest(**man), fsync=False) as writer:
        for i, (variables, tags) in enumerate(zip(VARIABLES, TAGS, strict=True)):
            rec = record(
                i,
                run_id,
                variables=dump_variables(variables),
                persona_tags=None if tags is None else dump_tags(tags),
            )
            writer.append(rec, turns_for(i))
        return writer.finalize()


# --------------------------------------------------------------------------- persona tags


def test_persona_tags_are_a_nullable_json_text_column(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    conv = run.conversations
    assert conv.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES
    assert list(conv.columns)[-1] == "persona_tags"
    assert conv["persona_tags"].tolist()[:3] == ['["angry","urdu"]', "[]", '["angry","urdu"]']
    assert pd.isna(conv["persona_tags"].iloc[3])
    # the journal replay (a crashed run) gives the same column
    for name in ("conversations.parquet", "turns.parquet"):
        (run.path / name).unlink()
    replayed = load_run(run.path)
    assert replayed.from_journal
    pd.testing.assert_frame_equal(replayed.conversations, conv)


@pytest.mark.parametrize(
    "tags",
    ['{"angry": true}', "[1, 2]", "angry", "[unclosed"],
    ids=["object", "ints", "bare", "bad"],
)
def test_persona_tags_must_be_a_json_list_of_strings(tmp_path: Path, tags: str) -> None:
    with RunWriter.create(tmp_path, "r1", manifest()) as writer:
        with pytest.raises(ValueError, match="persona_tags"):
            writer.append(record(0, persona_tags=tags), turns_for(0))
        assert len(writer) == 0


def test_dump_tags_keeps_order_and_unicode() -> None:
    assert dump_tags(("urdu", "ناراض")) == '["urdu","ناراض"]'
    assert json.loads(dump_tags([])) == []


# --------------------------------------------------------------------------- older runs


def test_a_run_stored_before_the_column_loads_with_nulls(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    path = run.path / "conversations.parquet"
    table = pq.read_table(path)
    old = table.drop_columns(["persona_tags"])  # the footer's journal stamp is kept
    pq.write_table(old, path)
    reloaded = load_run(run.path)
    conv = reloaded.conversations
    assert not reloaded.from_journal
    assert conv.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES
    assert conv["persona_tags"].isna().all()
    assert conv["conversation_id"].tolist() == run.conversations["conversation_id"].tolist()
    wide = reloaded.conversations_wide()
    assert not [c for c in wide.columns if c.startswith("tag.")]


def test_an_old_journal_without_the_field_replays_and_resumes(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    journal = run.path / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        del line["conversation"]["persona_tags"]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for name in ("conversations.parquet", "turns.parquet"):
        (run.path / name).unlink()
    conv = load_run(run.path).conversations
    assert len(conv) == 4
    assert conv["persona_tags"].isna().all()
    with RunWriter.resume(tmp_path, "r1", manifest()) as writer:
        records = writer.records()
        writer.append(record(9, persona_tags=dump_tags(["calm"])), turns_for(9))
        run = writer.finalize()
    assert all(r.persona_tags is None for r in records.values())
    assert run.conversations.set_index("conversation_id")["persona_tags"].to_dict()["conv-009"] == (
        '["calm"]'
    )


def test_from_json_dict_tolerates_a_missing_persona_tags() -> None:
    data = record(0).to_json_dict()
    del data["persona_tags"]
    assert ConversationRecord.from_json_dict(data).persona_tags is None


# --------------------------------------------------------------------------- wide frames


def test_conversations_wide_types_each_variable_by_its_values(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    wide = run.conversations_wide()
    conv = run.conversations
    assert list(wide.columns[: len(conv.columns)]) == list(conv.columns)
    added = {c: str(wide[c].dtype) for c in wide.columns[len(conv.columns) :]}
    assert added == {
        "variables.account": "str",
        "variables.age": "Int64",
        "variables.name": "str",
        "variables.score": "float64",
        "variables.slots": "object",
        "variables.vip": "boolean",
        "tag.angry": "boolean",
        "tag.urdu": "boolean",
    }
    assert wide["variables.account"].tolist() == ["0012", "0345", "0012", "0999"]
    assert wide["variables.age"].tolist()[:3] == [30, 41, 30]
    assert pd.isna(wide["variables.age"].iloc[3])  # JSON null is missing
    assert pd.isna(wide["variables.name"].iloc[3])  # so is an absent key
    assert wide["variables.score"].tolist()[:3] == [1.5, 2.0, 1.5]
    assert wide["variables.slots"].iloc[0] == ["10:00"]
    assert wide["variables.vip"].tolist()[:3] == [True, False, True]
    assert wide["tag.angry"].tolist()[:3] == [True, False, True]
    assert pd.isna(wide["tag.angry"].iloc[3])  # tags unknown, not absent
    pd.testing.assert_frame_equal(wide[conv.columns], conv)
    assert len(wide[wide["tag.angry"]]) == 2  # a boolean column filters directly


def test_conversations_wide_is_a_new_frame_each_time(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    before = run.conversations.copy()
    wide = run.conversations_wide()
    wide.loc[0, "variables.name"] = "changed"
    assert "variables.name" not in run.conversations.columns
    pd.testing.assert_frame_equal(run.conversations, before)
    assert run.conversations_wide().loc[0, "variables.name"] == "Ali"


def test_prefixes_and_no_tag_columns(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    wide = run.conversations_wide(prefix="var_", tag_prefix=None)
    new = [c for c in wide.columns if c not in run.conversations.columns]
    assert new == ["var_account", "var_age", "var_name", "var_score", "var_slots", "var_vip"]


def test_a_variable_that_would_overwrite_a_column_is_an_error(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path, "r1", manifest(), fsync=False) as writer:
        writer.append(record(0, variables=dump_variables({"status": "vip"})), turns_for(0))
        run = writer.finalize()
    with pytest.raises(ValueError, match="'status'"):
        run.conversations_wide(prefix="")
    assert run.conversations_wide()["variables.status"].tolist() == ["vip"]


def test_an_empty_run_widens_to_its_own_columns(tmp_path: Path) -> None:
    run = RunWriter.create(tmp_path, "empty", manifest()).finalize()
    wide = run.conversations_wide()
    assert wide.empty
    assert wide.dtypes.astype(str).to_dict() == CONVERSATION_DTYPES


def test_stacked_runs_widen_to_the_union_of_their_variables(tmp_path: Path) -> None:
    tagged_run(tmp_path, "r1", created_at="2026-11-01T02:00:00+00:00")
    with RunWriter.create(
        tmp_path, "r2", manifest(created_at="2026-11-02T02:00:00+00:00"), fsync=False
    ) as writer:
        writer.append(record(0, "r2", variables=dump_variables({"city": "Lahore"})), turns_for(0))
        writer.finalize()
    wide = expand_variables(load_runs(store=tmp_path))
    assert len(wide) == 5
    assert wide.groupby("run_id")["variables.city"].count().to_dict() == {"r1": 0, "r2": 1}
    assert wide.groupby("run_id")["variables.name"].count().to_dict() == {"r1": 3, "r2": 0}
    assert pd.isna(wide.loc[wide["run_id"] == "r2", "tag.angry"]).all()


def test_expand_variables_needs_a_conversations_frame(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'variables' column"):
        expand_variables(pd.DataFrame({"a": [1]}))
    with pytest.raises(ValueError, match="not a JSON dict"):
        expand_variables(pd.DataFrame({"variables": ["[1, 2]"]}))


# --------------------------------------------------------------------------- load_runs


def test_load_runs_takes_the_table_as_data_and_the_store_by_keyword(tmp_path: Path) -> None:
    params = inspect.signature(load_runs).parameters
    assert params["store"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["table"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    tagged_run(tmp_path, "r1")
    with pytest.raises(TypeError):
        load_runs(["r1"], "turns", tmp_path)  # type: ignore[misc]
    assert len(load_runs(["r1"], store=tmp_path)) == 4
    assert len(load_runs(["r1"], "turns", store=tmp_path)) == 12


# --------------------------------------------------------------------------- file modes


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
@pytest.mark.usefixtures("umask_022")
def test_run_files_are_0644_and_snapshots_0600(tmp_path: Path) -> None:
    run = tagged_run(tmp_path)
    write_grades(grades_frame({}, 0), grades_path(run.path, "rv1"), {})
    files = sorted(p for p in run.path.rglob("*") if p.is_file())
    names = {p.name for p in files}
    assert {"journal.jsonl", "manifest.json", "conversations.parquet", "rv1.parquet"} <= names
    assert {p.name: oct(mode(p)) for p in files} == {p.name: "0o644" for p in files}

    snapshot = ConfigSnapshot("asst_1", 3, "Reminder", {"prompt": "hi"}, "2026-11-01T00:00:00Z")
    saved = SnapshotStore(tmp_path).save(snapshot)
    assert oct(mode(saved)) == "0o600"


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
@pytest.mark.usefixtures("umask_022")
def test_a_resumed_journal_keeps_its_mode(tmp_path: Path) -> None:
    tagged_run(tmp_path)
    with RunWriter.resume(tmp_path, "r1", manifest()) as writer:
        writer.append(record(9), turns_for(9))
    assert oct(mode(tmp_path / "r1" / "journal.jsonl")) == "0o644"
