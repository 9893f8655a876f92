"""The runner fills persona_tags from the grid; the clone warning speaks plainly, and only when
a stored brief can make a difference (cells without context or variables on a clone)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evalkit.api import Client
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid, Persona
from evalkit.runner import RunOptions, run_grid
from evalkit.store import Run
from evalkit.targets import Target, Variant

from .runner_fixtures import emulator_fixture
from .runner_support import RECORDS, build_assistant

emu = emulator_fixture(time_scale=0.005, seed=31)

ANGRY = Persona("angry", "You are angry about a wrong bill; you complain.", tags=("angry", "bill"))
PLAIN = Persona("plain", "You answer politely and confirm.")
WARNING_START = "target plain-variant runs on a temporary copy of assistant"


@pytest.fixture(scope="module")
def assistant_id(emu: EmulatorServer) -> str:
    return build_assistant(emu)


def run(emu: EmulatorServer, assistant_id: str, grid: Grid, store: Path, target: Target) -> Run:
    client = Client(emu.base_url, emu.api_key)
    # a copy has no brief, so its prompt's tokens have no values without records: the warning
    # under test comes first, then the run would be refused (issue 23), so allow it
    return run_grid(
        grid,
        assistant_id,
        client=client,
        target=target,
        store=store,
        options=RunOptions(progress=False, allow_missing_variables=True),
    )


def test_each_conversation_carries_its_personas_tags(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path
) -> None:
    grid = Grid([ANGRY, PLAIN], variables=RECORDS, contexts=["Clinic reminder"])
    done = run(emu, assistant_id, grid, tmp_path, "draft")
    conv = done.conversations
    assert len(conv) == 4
    tags = conv.groupby("persona_label")["persona_tags"].unique().to_dict()
    assert {label: list(values) for label, values in tags.items()} == {
        "angry": ['["angry","bill"]'],
        "plain": ["[]"],
    }
    wide = done.conversations_wide()
    angry = wide[wide["persona_label"] == "angry"]
    plain = wide[wide["persona_label"] == "plain"]
    assert angry["tag.angry"].tolist() == angry["tag.bill"].tolist() == [True, True]
    assert plain["tag.angry"].tolist() == plain["tag.bill"].tolist() == [False, False]
    names = {json.loads(v)["name"] for v in conv["variables"]}
    assert set(wide["variables.name"]) == names == {"Ali", "Sara"}
    assert str(wide["variables.name"].dtype) == "str"


@pytest.mark.parametrize(
    ("variables", "contexts", "expected"),
    [
        pytest.param(
            None,
            None,
            "of the grid's 1 cell(s), 1 has no context and 1 has no variables.",
            id="neither",
        ),
        pytest.param(RECORDS, None, "of the grid's 2 cell(s), 2 have no context.", id="no-context"),
        pytest.param(
            None,
            ["Clinic reminder"],
            "of the grid's 1 cell(s), 1 has no variables.",
            id="no-variables",
        ),
        pytest.param(RECORDS, ["Clinic reminder"], None, id="both-given"),
    ],
)
def test_the_clone_warning_names_what_a_brief_would_fill_in(
    emu: EmulatorServer,
    assistant_id: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    variables: list[dict[str, str]] | None,
    contexts: list[str] | None,
    expected: str | None,
) -> None:
    grid = Grid([PLAIN], variables=variables, contexts=contexts)
    variant = Variant("plain-variant", {"agent": {"initialGreeting": True}})
    with caplog.at_level(logging.WARNING, logger="evalkit.runner"):
        run(emu, assistant_id, grid, tmp_path, variant)
    warnings = [r.getMessage() for r in caplog.records if WARNING_START in r.getMessage()]
    if expected is None:
        assert warnings == []
        return
    (message,) = warnings
    assert assistant_id in message
    assert expected in message
    assert "If that assistant was built from a brief" in message
    assert "contexts= and variables=" in message
    assert "--context, --variables" in message
    for jargon in ("fall back", "stored build brief", "clone"):
        assert jargon not in message


def test_no_clone_no_warning(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="evalkit.runner"):
        run(emu, assistant_id, Grid([PLAIN]), tmp_path, "draft")
    assert not [r for r in caplog.records if "temporary copy" in r.getMessage()]
