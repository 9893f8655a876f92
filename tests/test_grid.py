"""Grid: stable cell ids, inputs, validation before any request, sampling, sharding."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.api._exceptions import InvalidRequestError
from evalkit.grid import Cell, ConversationSlot, Grid, Persona, load_variables

REPO = Path(__file__).resolve().parent.parent

BUSY = Persona("busy", "You are busy and hang up.")
CALM = Persona("calm", "You are calm and confirm.", tags=("cooperative",))
HOSTILE = Persona("hostile", "You are hostile and object.")
RECORDS: list[dict[str, Any]] = [
    {"customer_name": "Ayesha Khan", "account": "0012", "amount_due": 15000},
    {"customer_name": "Bilal Ahmed", "account": "0345", "amount_due": 2500.5},
    {"customer_name": "عائشہ خان", "account": "0999"},
]
CONTEXTS = ["Shifa Clinic is calling about an appointment.", None]

# Computed once and written down: ids must never change across processes or versions.
LITERAL_ID = "1a8875208267cbc9"
LITERAL_CELL = (
    BUSY,
    {"customer_name": "Ayesha Khan", "account": "0012", "amount_due": 15000},
    "Shifa Clinic is calling about an appointment.",
)


def ids(grid: Grid) -> list[str]:
    return [c.cell_id for c in grid.cells()]


def problems_of(excinfo: pytest.ExceptionInfo[InvalidRequestError]) -> dict[str, str]:
    return {p.field: p.message for p in excinfo.value.problems}


# --------------------------------------------------------------------------- cell ids


def test_cell_id_is_a_literal_value() -> None:
    persona, record, context = LITERAL_CELL
    (cell,) = Grid([persona], [record], contexts=context).cells()
    assert cell.cell_id == LITERAL_ID
    key = json.dumps(
        [[persona.label, persona.behavior, persona.path], record, context],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert hashlib.sha256(key.encode()).hexdigest()[:16] == LITERAL_ID


def test_cell_id_is_stable_across_processes() -> None:
    code = (
        "from evalkit.grid import Grid\nfrom evalkit.grid import Persona\n"
        "g = Grid([Persona('busy', 'You are busy and hang up.')], "
        "[{'amount_due': 15000, 'account': '0012', 'customer_name': 'Ayesha Khan'}], "
        "contexts=['Shifa Clinic is calling about an appointment.'])\n"
        "print(next(g.cells()).cell_id)\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == LITERAL_ID


def test_cell_id_ignores_tags_description_position_and_key_order() -> None:
    persona, record, context = LITERAL_CELL
    tagged = Persona(persona.label, persona.behavior, tags=("x", "y"), description="people")
    reordered = dict(reversed(list(record.items())))
    grid = Grid([HOSTILE, tagged], [RECORDS[1], reordered], contexts=[None, context])
    assert LITERAL_ID in ids(grid)


def test_cell_id_changes_with_behavior_path_variables_and_context() -> None:
    persona, record, context = LITERAL_CELL
    variants = [
        Grid([Persona(persona.label, persona.behavior + " ")], [record], context),
        Grid([Persona(persona.label, persona.behavior, path="positive")], [record], context),
        Grid([persona], [{**record, "account": "12"}], context),
        Grid([persona], [{**record, "amount_due": 15000.0}], context),
        Grid([persona], [record], context + "."),
        Grid([persona], [record], None),
        Grid([persona], None, context),
    ]
    found = {next(g.cells()).cell_id for g in variants}
    assert LITERAL_ID not in found
    assert len(found) == len(variants)


@settings(max_examples=40, deadline=None)
@given(
    personas=st.permutations([BUSY, CALM, HOSTILE]),
    records=st.permutations(RECORDS),
    contexts=st.permutations(CONTEXTS),
)
def test_cell_ids_do_not_depend_on_order(
    personas: list[Persona], records: list[dict[str, Any]], contexts: list[str | None]
) -> None:
    base = Grid([BUSY, CALM, HOSTILE], RECORDS, CONTEXTS)
    shuffled = Grid(personas, records, contexts)
    meaning = {c.cell_id: (c.persona, c.variables, c.context) for c in base.cells()}
    assert {c.cell_id: (c.persona, c.variables, c.context) for c in shuffled.cells()} == meaning
    assert shuffled.definition() == base.definition()
    assert ids(shuffled.sample(5, seed=3)) == sorted(
        ids(base.sample(5, seed=3)), key=ids(shuffled).index
    )


# --------------------------------------------------------------------------- shape


def test_len_counts_conversations_and_slots_are_repeat_major() -> None:
    grid = Grid([BUSY, CALM], RECORDS, CONTEXTS, repeats=3)
    assert grid.n_cells == 2 * 3 * 2
    assert len(grid) == 12 * 3
    slots = list(grid.conversations())
    assert len(slots) == len(grid)
    assert all(isinstance(s, ConversationSlot) for s in slots)
    assert [s.repeat for s in slots[:12]] == [0] * 12
    assert [s.repeat for s in slots[-12:]] == [2] * 12
    conversation_ids = [s.conversation_id for s in slots]
    assert len(set(conversation_ids)) == len(conversation_ids)
    assert conversation_ids[0] == f"{slots[0].cell.cell_id}-0"
    assert [c.index for c in grid.cells()] == list(range(12))


def test_cells_are_persona_major_and_hashable() -> None:
    grid = Grid([BUSY, CALM], [{"a": "1"}, {"a": "2"}])
    cells = list(grid.cells())
    assert [(c.persona.label, c.variables) for c in cells] == [
        ("busy", {"a": "1"}),
        ("busy", {"a": "2"}),
        ("calm", {"a": "1"}),
        ("calm", {"a": "2"}),
    ]
    assert len(set(cells)) == 4
    assert isinstance(cells[0], Cell)
    assert cells[0].variables_json == '{"a":"1"}'
    assert cells[0].simulate_kwargs() == {
        "persona": BUSY.to_api(),
        "context": None,
        "variables": {"a": "1"},
    }


def test_no_variables_and_no_context() -> None:
    grid = Grid([BUSY])
    (cell,) = grid.cells()
    assert (cell.variables, cell.context, len(grid)) == (None, None, 1)
    assert cell.variables_json is None
    assert repr(grid).startswith("Grid(personas=1, variables=1, contexts=1, cells=1, repeats=1")


def test_contexts_as_string_list_and_none_entries() -> None:
    assert Grid([BUSY], contexts="ctx").n_cells == 1
    grid = Grid([BUSY], contexts=["a", None, "b"])
    assert [c.context for c in grid.cells()] == ["a", None, "b"]


def test_personas_from_mappings_paths_and_directories(tmp_path: Path) -> None:
    grid = Grid([{"label": "m", "behavior": "You are m."}, BUSY])
    assert [p.label for p in grid.personas] == ["m", "busy"]
    repo = Grid(REPO / "personas")
    assert len(repo.personas) >= 12
    one = tmp_path / "one.yaml"
    one.write_text("label: one\nbehavior: You are one.\n", encoding="utf-8")
    assert [p.label for p in Grid([one, BUSY]).personas] == ["one", "busy"]
    assert Grid(str(one)).n_cells == 1


# --------------------------------------------------------------------------- variables inputs


def test_dataframe_rows_keep_types_and_omit_missing() -> None:
    frame = pd.DataFrame(
        {
            "name": ["Ayesha", "Bilal", None],
            "amount": [15000, 2500, 10],
            "rate": [0.5, np.nan, 1.25],
            "vip": [True, False, True],
            "phone": ["03001234567", "03211234567", "0300"],
        }
    )
    records = [dict(c.variables or {}) for c in Grid([BUSY], frame).cells()]
    assert records[0] == {
        "name": "Ayesha",
        "amount": 15000,
        "rate": 0.5,
        "vip": True,
        "phone": "03001234567",
    }
    assert type(records[0]["amount"]) is int
    assert type(records[0]["vip"]) is bool
    assert "rate" not in records[1]
    assert "name" not in records[2]


def test_csv_keeps_leading_zeros_and_empty_cells_are_omitted(tmp_path: Path) -> None:
    csv = tmp_path / "contacts.csv"
    csv.write_text(
        "customer_name,account,phone,amount_due\n"
        "Ayesha Khan,0012,03001234567,15000\n"
        "NA,0345,,2500\n"
        "عائشہ خان,0999,03211234567,\n",
        encoding="utf-8",
    )
    records = [c.variables for c in Grid([BUSY], csv).cells()]
    assert records[0] == {
        "customer_name": "Ayesha Khan",
        "account": "0012",
        "phone": "03001234567",
        "amount_due": "15000",
    }
    assert records[1] == {"customer_name": "NA", "account": "0345", "amount_due": "2500"}
    assert records[2] == {"customer_name": "عائشہ خان", "account": "0999", "phone": "03211234567"}
    assert Grid([BUSY], str(csv)).n_cells == 3
    numeric = load_variables(csv, csv_dtype=None)
    assert numeric[0] is not None
    assert numeric[0]["amount_due"] == 15000


def test_csv_with_byte_order_mark(tmp_path: Path) -> None:
    csv = tmp_path / "excel.csv"
    csv.write_bytes("\ufeffid,name\n0012,Ali\n".encode())
    assert load_variables(csv) == [{"id": "0012", "name": "Ali"}]


def test_json_and_jsonl_files(tmp_path: Path) -> None:
    (tmp_path / "v.json").write_text(json.dumps(RECORDS), encoding="utf-8")
    (tmp_path / "v.jsonl").write_text(
        "\n".join(json.dumps(r) for r in RECORDS) + "\n", encoding="utf-8"
    )
    assert load_variables(tmp_path / "v.json") == RECORDS
    assert load_variables(tmp_path / "v.jsonl") == RECORDS


def test_list_of_dicts_single_dict_and_none_entries() -> None:
    assert load_variables(RECORDS) == RECORDS
    assert load_variables({"a": 1}) == [{"a": 1}]
    assert load_variables(None) == [None]
    grid = Grid([BUSY], [{"a": 1, "b": None, "c": math.nan}, None])
    assert [c.variables for c in grid.cells()] == [{"a": 1, "b": None}, None]


def test_numpy_values_in_dicts_are_unboxed() -> None:
    (record,) = load_variables([{"n": np.int64(3), "x": np.float64(1.5), "ok": np.bool_(True)}])
    assert record == {"n": 3, "x": 1.5, "ok": True}
    assert type(record["n"]) is int
    assert type(record["ok"]) is bool


# --------------------------------------------------------------------------- validation


def test_every_limit_violation_is_reported_at_once() -> None:
    long_key = "customer_name_" + "x" * 51  # 65 characters
    records = [
        {"ok": "fine"},
        {long_key: "Ayesha"},
        {"notes": "x" * 2990},  # compact JSON is 3002 characters
    ]
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], records, contexts=["fine", "x" * 8001], repeats=0, shard=(4, 4))
    problems = problems_of(info)
    assert set(problems) == {
        f"variables[1].{long_key[:20]}…",
        "variables[2]",
        "contexts[1]",
        "repeats",
        "shard",
    }
    assert "at most 64" in problems[f"variables[1].{long_key[:20]}…"]
    assert "under 3000" in problems["variables[2]"]
    assert "8000" in problems["contexts[1]"]
    assert "invalid grid (5 problem(s)); nothing was sent" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_values_at_the_limits_are_accepted() -> None:
    at_key = {"k" * 64: "v"}
    just_under = {"notes": "x" * (2999 - len('{"notes":""}'))}
    assert len(json.dumps(just_under, separators=(",", ":"))) == 2999
    grid = Grid([BUSY], [at_key, just_under], contexts="x" * 8000)
    assert grid.n_cells == 2


def test_json_length_counts_characters_not_bytes() -> None:
    urdu = {"note": "ا" * (2999 - len('{"note":""}'))}
    assert Grid([BUSY], [urdu]).n_cells == 1
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], [{"note": urdu["note"] + "ا"}])
    assert set(problems_of(info)) == {"variables[0]"}


def test_bad_types_are_reported_with_their_paths() -> None:
    with pytest.raises(InvalidRequestError) as info:
        Grid(
            [BUSY, 3],  # type: ignore[list-item]
            ["not a dict", {"deep": {"x": math.inf}}, {"when": object()}],  # type: ignore[list-item]
            contexts=["ok", 7],  # type: ignore[list-item]
            repeats=True,
        )
    problems = problems_of(info)
    assert set(problems) == {
        "personas[1]",
        "variables[0]",
        "variables[1].deep.x",
        "variables[2].when",
        "contexts[1]",
        "repeats",
    }
    assert "finite" in problems["variables[1].deep.x"]


def test_empty_inputs_are_rejected() -> None:
    with pytest.raises(InvalidRequestError) as info:
        Grid([], [], contexts=[])
    assert set(problems_of(info)) == {"personas", "variables", "contexts"}


def test_persona_file_problems_join_the_grid_problems(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("label: x\n", encoding="utf-8")
    with pytest.raises(InvalidRequestError) as info:
        Grid(tmp_path, contexts="x" * 8001)
    messages = [str(p) for p in info.value.problems]
    assert any("bad.yaml: behavior: is required" in m for m in messages)
    assert "contexts" in info.value.fields


def test_duplicates_are_rejected_not_merged() -> None:
    with pytest.raises(InvalidRequestError) as info:
        Grid(
            [BUSY, CALM, Persona("busy", "You are busy and hang up.", tags=("other",))],
            [RECORDS[0], dict(reversed(list(RECORDS[0].items())))],
            contexts=["a", "b", "a"],
        )
    problems = problems_of(info)
    assert set(problems) == {"personas[2]", "variables[1]", "contexts[2]"}
    assert "duplicates personas[0]" in problems["personas[2]"]
    assert "duplicates variables[0]" in problems["variables[1]"]


def test_same_label_with_another_behavior_is_rejected() -> None:
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY, Persona("busy", "Another behaviour.")])
    assert set(problems_of(info)) == {"personas[1].label"}


def test_unreadable_and_empty_variable_files(tmp_path: Path) -> None:
    header_only = tmp_path / "empty.csv"
    header_only.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], header_only)
    assert "no records" in problems_of(info)["variables"]
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], tmp_path / "missing.csv")
    assert "cannot read" in problems_of(info)["variables"]


# --------------------------------------------------------------------------- sample and shard


def big_grid(n_records: int = 40) -> Grid:
    records = [{"customer_name": f"Customer {i}", "account": f"{i:04d}"} for i in range(n_records)]
    return Grid([BUSY, CALM, HOSTILE], records, CONTEXTS, repeats=2)


def test_sample_is_reproducible_and_keeps_grid_order() -> None:
    grid = big_grid()
    first = grid.sample(25, seed=7)
    assert ids(first) == ids(grid.sample(25, seed=7))
    assert ids(first) != ids(grid.sample(25, seed=8))
    assert first.n_cells == 25
    assert len(first) == 50
    assert set(ids(first)) <= set(ids(grid))
    assert ids(first) == [i for i in ids(grid) if i in set(ids(first))]
    assert grid.sample(10_000, seed=1).n_cells == grid.n_cells
    assert grid.sample(0, seed=1).n_cells == 0


def test_sample_rejects_bad_arguments() -> None:
    grid = big_grid(2)
    with pytest.raises(ValueError, match="n must be"):
        grid.sample(-1, seed=0)
    with pytest.raises(ValueError, match="seed must be"):
        grid.sample(1, seed=None)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(count=st.integers(min_value=1, max_value=9))
def test_shards_are_disjoint_and_cover_the_grid(count: int) -> None:
    grid = big_grid(20)
    shards = [grid.shard(i, count) for i in range(count)]
    all_ids = [i for s in shards for i in ids(s)]
    assert len(all_ids) == len(set(all_ids))
    assert set(all_ids) == set(ids(grid))
    assert sum(len(s) for s in shards) == len(grid)


def test_shard_is_stable_when_cells_are_added() -> None:
    small, large = big_grid(10), big_grid(30)
    for index in range(3):
        assert set(ids(small.shard(index, 3))) <= set(ids(large.shard(index, 3)))


def test_constructor_shard_equals_method_and_validates() -> None:
    records = [{"i": str(i)} for i in range(30)]
    assert ids(Grid([BUSY], records, shard=(1, 3))) == ids(Grid([BUSY], records).shard(1, 3))
    for bad in [(3, 3), (-1, 3), (0, 0), (1,), ("0", "2")]:
        with pytest.raises(InvalidRequestError) as info:
            Grid([BUSY], shard=bad)  # type: ignore[arg-type]
        assert info.value.fields == ["shard"]
    with pytest.raises(InvalidRequestError):
        Grid([BUSY]).shard(2, 2)


# --------------------------------------------------------------------------- descriptions


def test_definition_is_json_and_equal_for_equal_grids() -> None:
    a = Grid([BUSY, CALM], RECORDS, CONTEXTS, repeats=2).sample(4, seed=1).shard(0, 2)
    b = Grid([CALM, BUSY], RECORDS[::-1], CONTEXTS[::-1], repeats=2).sample(4, seed=1).shard(0, 2)
    definition = a.definition()
    assert json.loads(json.dumps(definition)) == definition
    assert definition == b.definition()
    assert a.digest() == b.digest()
    assert definition["repeats"] == 2
    assert definition["sample"] == {"n": 4, "seed": 1}
    assert definition["shard"] == {"index": 0, "count": 2}
    assert definition["n_conversations"] == len(a)
    assert definition["personas"][0] == BUSY.to_api()
    assert Grid([BUSY], repeats=2).digest() != Grid([BUSY], repeats=3).digest()
    assert Grid([BUSY]).digest() != Grid([BUSY]).shard(0, 1).digest()


def test_from_definition_rebuilds_the_same_cells() -> None:
    grid = big_grid(15).sample(30, seed=4).shard(1, 2)
    rebuilt = Grid.from_definition(json.loads(json.dumps(grid.definition())))
    assert set(ids(rebuilt)) == set(ids(grid))
    assert rebuilt.repeats == grid.repeats
    assert rebuilt.digest() == grid.digest()
    with pytest.raises(ValueError, match="version"):
        Grid.from_definition({**grid.definition(), "version": 99})


def test_to_frame_has_one_row_per_cell() -> None:
    grid = Grid([BUSY, CALM], RECORDS, CONTEXTS)
    frame = grid.to_frame()
    assert list(frame.columns) == ["cell_id", "index", "persona_label", "variables", "context"]
    assert len(frame) == grid.n_cells
    assert frame["cell_id"].tolist() == ids(grid)
    assert str(frame["cell_id"].dtype) == "string"
    first = json.loads(frame["variables"].iloc[0])
    assert first == RECORDS[0]
    assert frame["context"].isna().sum() == grid.n_cells // 2
    assert Grid([BUSY]).to_frame()["variables"].isna().all()
