"""Variables files: problems name the file's line, a repeated CSV column is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.api import InvalidRequestError
from evalkit.grid import Grid, Persona, load_variables
from evalkit.grid._variables import Places

BUSY = Persona("busy", "You are busy and want the call to be short.")
LONG = "x" * 3100  # a record with this value is over the 3000-character JSON limit


def problems_of(info: pytest.ExceptionInfo[InvalidRequestError]) -> dict[str, str]:
    return {p.field: p.message for p in info.value.problems}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_repeated_csv_column_is_an_error_naming_column_and_file(tmp_path: Path) -> None:
    csv = write(tmp_path / "contacts.csv", "customer_name,phone,customer_name\nAli,0300,Ali B\n")
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], csv)
    (problem,) = info.value.problems
    assert problem.field == "variables"
    assert str(csv) in problem.message
    assert "'customer_name' appears 2 times (columns 1 and 3)" in problem.message
    with pytest.raises(InvalidRequestError, match="customer_name"):
        load_variables(csv)


def test_distinct_columns_that_look_like_pandas_renames_are_fine(tmp_path: Path) -> None:
    csv = write(tmp_path / "contacts.csv", "name,name.1\nAli,Bilal\n")
    assert load_variables(csv) == [{"name": "Ali", "name.1": "Bilal"}]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param("customer_name,notes\nAli,ok\nBilal,{long}\n", 3, id="plain"),
        pytest.param("customer_name,notes\n\nAli,ok\n\nBilal,{long}\n", 5, id="blank-lines"),
        pytest.param(
            'customer_name,notes\n"Ali","two\nlines"\nBilal,{long}\n', 4, id="quoted-newline"
        ),
        pytest.param("\ufeffcustomer_name,notes\nAli,ok\nBilal,{long}\n", 3, id="bom"),
    ],
)
def test_a_csv_record_problem_names_its_line(tmp_path: Path, text: str, line: int) -> None:
    csv = write(tmp_path / "contacts.csv", text.replace("{long}", LONG))
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], csv)
    problems = problems_of(info)
    assert list(problems) == [f"contacts.csv line {line}: variables"]
    assert "under 3000" in problems[f"contacts.csv line {line}: variables"]
    assert f"contacts.csv line {line}: variables: JSON must be under 3000" in str(info.value)


def test_a_long_key_in_a_csv_names_the_line_and_the_key(tmp_path: Path) -> None:
    key = "customer_name_" + "x" * 51  # 65 characters
    csv = write(tmp_path / "contacts.csv", f"{key}\nAli\n")
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], csv)
    assert list(problems_of(info)) == [f"contacts.csv line 2: variables.{key[:20]}…"]


def test_a_duplicate_csv_row_names_both_lines(tmp_path: Path) -> None:
    csv = write(tmp_path / "contacts.csv", "name,slot\nAli,10:00\nBilal,11:00\nAli,10:00\n")
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], csv)
    assert problems_of(info) == {
        "contacts.csv line 4: variables": (
            "duplicates line 2 (an identical record); drop it or use repeats"
        )
    }


def test_jsonl_problems_name_the_line(tmp_path: Path) -> None:
    long = write(tmp_path / "contacts.jsonl", f'{{"a": "ok"}}\n\n{{"a": "{LONG}"}}\n')
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], long)
    assert list(problems_of(info)) == ["contacts.jsonl line 3: variables"]
    broken = write(tmp_path / "broken.jsonl", '{"a": 1}\n{"a": \n')
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], broken)
    assert "line 2: Expecting value" in problems_of(info)["variables"]


def test_json_list_problems_name_the_record_counting_from_one(tmp_path: Path) -> None:
    data = write(tmp_path / "contacts.json", f'[{{"a": "ok"}}, {{"a": "{LONG}"}}, 7]')
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], data)
    assert set(problems_of(info)) == {
        "contacts.json record 2: variables",
        "contacts.json record 3: variables",
    }


def test_python_lists_keep_their_zero_based_index() -> None:
    with pytest.raises(InvalidRequestError) as info:
        Grid([BUSY], [{"a": "ok"}, {"a": LONG}])
    assert list(problems_of(info)) == ["variables[1]"]


def test_a_valid_csv_with_blank_lines_keeps_its_records(tmp_path: Path) -> None:
    csv = write(tmp_path / "contacts.csv", "name,slot\nAli,10:00\n\nBilal,\n")
    grid = Grid([BUSY], csv)
    assert [c.variables for c in grid.cells()] == [
        {"name": "Ali", "slot": "10:00"},
        {"name": "Bilal"},
    ]


def test_when_line_numbers_cannot_be_matched_records_are_counted(tmp_path: Path) -> None:
    csv = write(tmp_path / "contacts.csv", "name\nAli\nBilal\n")
    assert Places(csv, csv_rows=2).field(1) == "contacts.csv line 3: variables"
    assert Places(csv, csv_rows=5).field(1) == "contacts.csv record 2: variables"
    assert Places().field(1) == "variables[1]"
