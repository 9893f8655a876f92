"""The first hour: help without noise, bundled content, assistants from the CLI, run tables,
progress that fits where it runs, and emulator + assistants create + run from outside the repo."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit._util._progress import Progress, progress_mode
from evalkit.api import Client
from evalkit.cli import app
from evalkit.cli._outcome import resume_command
from evalkit.data import contacts_path, personas_path
from evalkit.targets import SnapshotStore

from .cli_support import emulator_command, read_exports

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = (
    [],
    ["run"],
    ["runs"],
    ["sql"],
    ["assistants"],
    ["assistants", "create"],
    ["personas", "list"],
    ["emulator"],
    ["snapshot"],
    ["view"],
    ["view", "bundle"],
    ["labels", "export"],
    ["labels", "import"],
    ["labels", "agreement"],
    ["lint"],
    ["tune"],
    ["history"],
    ["refine"],
)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c) or "root")
def test_help_has_no_type_noise(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    for noise in ("<bool>", "list[str]", "Annotated["):
        assert noise not in result.output


def test_run_help_documents_the_exit_codes() -> None:
    result = CliRunner().invoke(app, ["run", "--help"])
    assert "3 partial run" in result.output
    assert "130 interrupted" in result.output


def test_bundled_paths_exist() -> None:
    assert contacts_path().is_file()
    assert len(list(personas_path().glob("*.yaml"))) >= 10


def test_personas_list_defaults_to_bundled_outside_a_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["personas", "list"])
    assert result.exit_code == 0, result.output
    assert "cooperative" in result.output
    assert str(personas_path()) in result.output
    assert str(contacts_path()) in result.output


def test_resume_command_drops_budget_and_old_run_id() -> None:
    argv = ["run", "-a", "X", "--max-conversations", "3", "--run-id", "old", "--max-seconds=5"]
    line = resume_command(argv, "new")
    assert line == "evalkit run -a X --run-id new"


def test_progress_off_tty_prints_a_few_summary_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_PROGRESS", raising=False)
    stream = io.StringIO()
    assert progress_mode(None, stream) == "lines"
    with Progress(100, 0, "draft r1", None, stream) as bar:
        for i in range(100):
            bar.update("done" if i % 4 else "error")
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 12
    assert lines[0] == "draft r1: 0 of 100 recorded, 100 to run"
    assert "100 of 100 (100%): 75 done, 25 error" in lines[-1]
    assert "finished after" in lines[-1]


def test_progress_mode_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_PROGRESS", "off")
    assert progress_mode(None, io.StringIO()) == "off"
    monkeypatch.delenv("EVALKIT_PROGRESS")
    assert progress_mode(False, io.StringIO()) == "off"


@pytest.mark.slow
def test_first_hour_outside_the_repository(tmp_path: Path) -> None:
    """emulator + assistants create + run + runs, with cwd outside the repo: bundled personas
    and sample contacts, as README shows."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env.pop("EVALKIT_DEBUG", None)
    with emulator_command("--time-scale", "0.002", cwd=tmp_path, env=env) as proc:
        env.update(read_exports(proc))

        def evalkit(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "evalkit", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp_path,
                timeout=120,
            )

        # README's spellings, from a folder that has none of them: the bundled files
        assert not (tmp_path / "examples").exists()
        created = evalkit("assistants", "create", "--name", "Clinic", "--config",
                          "examples/assistant.yaml", "--json")  # fmt: skip
        assert created.returncode == 0, created.stderr
        assistant_id = json.loads(created.stdout)["realtimeAssistantId"]
        run = evalkit("run", "--assistant", assistant_id, "--variables", "examples/contacts.csv",
                      "--context", "A reminder from the clinic.", "--shard", "0/17",
                      "--run-id", "first")  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Run first (draft v1):" in run.stdout
        assert "Traceback" not in run.stderr
        listed = evalkit("runs", "--json")
        rows = json.loads(listed.stdout)
        assert rows[0]["run_id"] == "first"
        assert rows[0]["outcome"] == "complete"
        assert rows[0]["n_conversations"] == rows[0]["grid_size"] > 0
        published = evalkit("assistants", "publish", assistant_id)
        assert "prod is now version 1" in published.stdout, published.stderr


@pytest.mark.slow
def test_emulator_demo_assistant_prints_a_run_line(tmp_path: Path) -> None:
    with emulator_command("--demo-assistant", cwd=tmp_path) as proc:
        assert proc.stdout is not None
        lines = []  # the banner, up to the run line it must print
        while (
            not (lines and lines[-1].startswith("# evalkit run --assistant ")) and len(lines) < 40
        ):
            lines.append(proc.stdout.readline().strip())
        exports = dict(
            line.removeprefix("export ").split("=", 1)
            for line in lines
            if line.startswith("export ")
        )
        with Client(exports["EVALKIT_BASE_URL"], exports["EVALKIT_API_KEY"]) as client:
            (assistant,) = client.list_assistants()
    assert lines[0].startswith("export EVALKIT_BASE_URL=http://127.0.0.1:")
    assert any(line.startswith("# demo assistant: ") for line in lines)
    # as in `evalkit demo`: prod v1 published (its snapshot where `--target prod` finds it),
    # the simplified draft saved as v2; its id exported for the shell
    assert exports["EVALKIT_ASSISTANT_ID"] == assistant.id
    assert assistant.aliases.prod is not None
    assert (assistant.aliases.prod.version, assistant.aliases.draft.version) == (1, 2)
    assert SnapshotStore(tmp_path / "runs").load(assistant.id, 1) is not None
    # the run line spells the sample contacts by name, not as a path into the installed package
    assert lines[-1].startswith(f"# evalkit run --assistant {assistant.id} ")
    assert " --variables examples/contacts.csv " in lines[-1]
    assert str(contacts_path().parent) not in lines[-1]
    # the demo's whole config: the bundled variants' LLM-knob patch and the play control need it
    config = assistant.config.to_json()
    assert config["llm"]["default"] == {"provider": "vendor_c", "model": "llm-5.4-mini"}
    assert config["tts"]["default"]["voiceId"]
    assert config["agent"]["greetingInstructions"]
