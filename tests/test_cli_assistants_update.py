"""`evalkit assistants update ID --config FILE / --instructions FILE` against the emulator:
the prompt lands in agent.instructions, what changed is shown, a bad config sends nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from evalkit.api import Client
from evalkit.cli import app
from evalkit.emulator import EmulatorServer, serve

ROOT = Path(__file__).resolve().parent.parent
PROMPT = (
    "You are Sana from {{clinic_name}}. Remind {{customer_name}} of the appointment with "
    "{{doctor_name}} on {{appointment_date}} at {{appointment_time}}. Always answer in Urdu "
    "(Nastaliq) script and ask the caller to confirm with a yes or no."
)
runner = CliRunner()


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    with serve(time_scale=0.002, seed=3) as server:
        yield server


@pytest.fixture
def assistant(emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh assistant made from examples/assistant.yaml, with the CLI pointed at it."""
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    monkeypatch.delenv("EVALKIT_DEBUG", raising=False)
    config = yaml.safe_load((ROOT / "examples" / "assistant.yaml").read_text(encoding="utf-8"))
    with Client(emu.base_url, emu.api_key) as client:
        return client.create_assistant("Clinic reminder", config).id


def _draft(emu: EmulatorServer, assistant: str) -> tuple[int, dict[str, Any]]:
    with Client(emu.base_url, emu.api_key) as client:
        version = client.get_assistant_metadata(assistant).aliases.draft.version
        (found,) = [a for a in client.list_assistants() if a.id == assistant]
        return version, found.config.to_json()


def test_instructions_land_in_the_prompt_and_the_diff_is_shown(
    emu: EmulatorServer, assistant: str, tmp_path: Path
) -> None:
    version, before = _draft(emu, assistant)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(f"\n{PROMPT}\n\n", encoding="utf-8")
    result = runner.invoke(app, ["assistants", "update", assistant, "--instructions", str(prompt)])
    assert result.exit_code == 0, result.output
    now, after = _draft(emu, assistant)
    assert now == version + 1
    assert after["agent"]["instructions"] == PROMPT
    assert {k: v for k, v in after["agent"].items() if k != "instructions"} == {
        k: v for k, v in before["agent"].items() if k != "instructions"
    }
    assert {k: v for k, v in after.items() if k != "agent"} == {
        k: v for k, v in before.items() if k != "agent"
    }
    assert f"--- agent.instructions@v{version}" in result.output
    assert f"+{PROMPT}" in result.output
    assert f"updated {assistant}: draft v{version} -> v{version + 1}" in result.output
    again = runner.invoke(app, ["assistants", "update", assistant, "--instructions", str(prompt)])
    assert again.exit_code == 0, again.output
    assert "no change" in again.output
    assert _draft(emu, assistant)[0] == now  # nothing sent


def test_a_config_file_replaces_the_draft_and_names_each_changed_path(
    emu: EmulatorServer, assistant: str, tmp_path: Path
) -> None:
    version, before = _draft(emu, assistant)
    changed = {
        **before,
        "agent": {**before["agent"], "initialGreeting": False},
        "llm": {"default": {"provider": "vendor_a", "model": "m", "apiKey": "sk-provider-123456"}},
    }
    file = tmp_path / "config.yaml"
    file.write_text(yaml.safe_dump(changed, allow_unicode=True), encoding="utf-8")
    result = runner.invoke(app, ["assistants", "update", assistant, "--config", str(file)])
    assert result.exit_code == 0, result.output
    assert _draft(emu, assistant) == (version + 1, changed)
    assert "changed agent.initialGreeting: True -> False" in result.output
    assert "changed llm.default.model: <absent> -> 'm'" in result.output
    assert "sk-provider-123456" not in result.output  # provider keys are redacted
    assert "agent.instructions@" not in result.output  # the prompt did not change


def test_a_bad_config_is_refused_before_anything_is_sent(
    emu: EmulatorServer, assistant: str, tmp_path: Path
) -> None:
    version, before = _draft(emu, assistant)
    file = tmp_path / "config.json"
    file.write_text('{"agent": {"instructions": "x"}, "llm": {"default": {}}}', encoding="utf-8")
    result = runner.invoke(app, ["assistants", "update", assistant, "--config", str(file)])
    assert result.exit_code == 1
    assert "nothing was sent" in result.output
    assert "config.llm.default.provider" in result.output
    assert "Traceback" not in result.output
    assert _draft(emu, assistant) == (version, before)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ([], 2, "give --config FILE, --instructions FILE, or both"),
        (["--instructions", "{empty}"], 2, "is empty"),
        (["--config", "{missing}"], 2, "cannot read"),
    ],
)
def test_mistakes_are_named(
    assistant: str, tmp_path: Path, args: list[str], code: int, words: str
) -> None:
    (tmp_path / "empty.txt").write_text("\n \n", encoding="utf-8")
    given = [a.format(empty=tmp_path / "empty.txt", missing=tmp_path / "nope.yaml") for a in args]
    result = runner.invoke(app, ["assistants", "update", assistant, *given])
    assert result.exit_code == code, result.output
    assert words in result.output


def test_an_unknown_assistant_is_the_services_404(assistant: str, tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    result = runner.invoke(app, ["assistants", "update", "nope", "--instructions", str(prompt)])
    assert result.exit_code == 1
    assert "404" in result.output
    assert "evalkit assistants list" in result.output
