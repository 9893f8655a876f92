"""Issue 14, item 2: a grid refuses text it cannot send (a lone UTF-16 surrogate), naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.api import InvalidRequestError
from evalkit.grid import Grid, Persona

PERSONA = Persona("Caller", "Answers briefly.", "confirm")

CASES = [
    pytest.param({"variables": {"name": "Ali\ud800"}}, "variables[0].name", id="record-value"),
    pytest.param(
        {"variables": {"na\udfffme": "Ali"}}, "variables[0]['na\\udfffme']", id="record-key"
    ),
    pytest.param(
        {"variables": [{"ok": "x"}, {"deep": {"list": ["a", "\udc00"]}}]},
        "variables[1].deep.list[1]",
        id="nested-value",
    ),
    pytest.param(
        {"variables": [{"deep": {"\ud83d": 1}}]}, "variables[0].deep['\\ud83d']", id="nested-key"
    ),
    pytest.param({"contexts": "Clinic \ud800 reminders"}, "contexts", id="context"),
    pytest.param({"contexts": ["fine", "bad \udbff"]}, "contexts[1]", id="context-list"),
]


@pytest.mark.parametrize(("kwargs", "field"), CASES)
def test_a_lone_surrogate_is_a_listed_problem_naming_the_field(
    kwargs: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        Grid([PERSONA], **kwargs)
    assert field in caught.value.fields
    assert "surrogate" in str(caught.value)
    str(caught.value).encode("utf-8")  # the message itself is printable


def test_every_bad_field_is_listed_at_once_with_other_problems() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        Grid(
            [PERSONA, Persona("Other\ud800", "b", "p")],
            [{"a": "\ud800"}, {"b": "fine"}],
            ["\udfff", "ok"],
            repeats=0,
        )
    assert set(caught.value.fields) >= {
        "variables[0].a",
        "contexts[0]",
        "personas[1].label",
        "repeats",
    }


def test_a_valid_astral_character_is_accepted_and_keeps_its_cell_id() -> None:
    grid = Grid([PERSONA], {"name": "Zoë 🙂"}, "Urdu: اردو")
    again = Grid([PERSONA], {"name": "Zoë 🙂"}, "Urdu: اردو")
    assert len(grid) == 1
    assert [c.cell_id for c in grid.cells()] == [c.cell_id for c in again.cells()]
