"""Before any conversation: a prompt token without a value in a variables record refuses the
run (nothing requested, no run folder); allow_missing_variables runs it; lint is logged."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.api import Client
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid, load_personas
from evalkit.runner import MissingVariablesError, RunAborted, RunOptions, run_grid
from evalkit.targets import Variant

from ..runner_fixtures import emulator_fixture
from ..runner_support import PERSONAS_DIR, build_reminder

emu = emulator_fixture(time_scale=0.005, seed=7)

PROMPT = (
    "You are Sana. Remind {{customer_name}} of the appointment on {{appointment_date}} at "
    "{{appointment_time}}. Confirm yes or no. Say goodbye."
)
NO_DATE = [
    {"customer_name": "Ali", "appointment_time": "10 AM"},
    {"customer_name": "Sara", "appointment_time": "11 AM"},
    {"customer_name": "Omar", "appointment_time": "", "appointment_date": "Friday"},
]


@pytest.fixture(scope="module")
def assistant_id(emu: EmulatorServer) -> str:
    built = build_reminder(
        emu, PROMPT, config={"noiseCancellation": {"enabled": True, "level": 0.5}}
    )
    return str(built["realtimeAssistantId"])


def _grid(records: list[dict[str, str]]) -> Grid:
    return Grid(load_personas(PERSONAS_DIR)[:2], variables=records, contexts=["Clinic"], repeats=2)


def test_refused_before_any_conversation(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path
) -> None:
    before = emu.stats()["started"]
    with Client(emu.base_url, emu.api_key) as client, pytest.raises(MissingVariablesError) as info:
        run_grid(
            _grid(NO_DATE),
            assistant_id,
            client=client,
            store=tmp_path / "runs",
            options=RunOptions(progress=False),
        )
    error = info.value
    assert isinstance(error, RunAborted)
    assert error.missing.names == ("appointment_date", "appointment_time")
    assert error.missing.rows == {"appointment_date": (1, 2), "appointment_time": (3,)}
    text = str(error)
    assert "{{appointment_date}}: no value in records 1, 2 (of 3)" in text
    assert "allow_missing_variables=True" in text
    assert emu.stats()["started"] == before  # no conversation was requested
    runs = [p.name for p in (tmp_path / "runs").iterdir() if p.name != ".snapshots"]
    assert runs == []  # no run folder either
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == text


def test_allowed_runs_every_conversation(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    grid = _grid(NO_DATE)
    caplog.set_level(logging.INFO, logger="evalkit.runner")
    with Client(emu.base_url, emu.api_key) as client:
        run = run_grid(
            grid,
            assistant_id,
            client=client,
            store=tmp_path / "runs",
            options=RunOptions(allow_missing_variables=True, progress=False),
        )
    assert len(run.conversations) == len(grid)
    said = " ".join(run.turns.loc[run.turns["role"] == "agent", "text"])
    assert "{{appointment_date}}" in said  # what the check saves the money on
    logged = caplog.text
    assert "running anyway" in logged
    assert "noise-cancellation-strong at noiseCancellation.level" in logged  # lint is logged


def test_complete_records_run_and_a_variant_prompt_is_checked(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path
) -> None:
    full = [{"customer_name": "Ali", "appointment_date": "Monday", "appointment_time": "10 AM"}]
    with Client(emu.base_url, emu.api_key) as client:
        run = run_grid(
            _grid(full),
            assistant_id,
            client=client,
            store=tmp_path / "a",
            options=RunOptions(progress=False),
        )
        assert (run.conversations["status"] == "done").all()
        variant = Variant.with_instructions("v", PROMPT + " Mention {{doctor_name}}.")
        with pytest.raises(MissingVariablesError, match=r"\{\{doctor_name\}\}"):
            run_grid(
                _grid(full),
                assistant_id,
                client=client,
                target=variant,
                store=tmp_path / "b",
                options=RunOptions(progress=False),
            )


def test_cli_refuses_and_allows(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    csv = tmp_path / "vars.csv"
    csv.write_text("customer_name,appointment_time\nAli,10 AM\n", "utf-8")
    args = ["run", "-a", assistant_id, "--variables", str(csv), "--store", str(tmp_path / "r")]
    args += ["--personas", str(PERSONAS_DIR / "cooperative.yaml")]
    before = emu.stats()["started"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 4, refused.output
    assert "{{appointment_date}}" in refused.output
    assert "--allow-missing-variables" in refused.output
    assert emu.stats()["started"] == before
    allowed = CliRunner().invoke(app, [*args, "--allow-missing-variables"])
    assert allowed.exit_code == 0, allowed.output
    assert emu.stats()["started"] > before
