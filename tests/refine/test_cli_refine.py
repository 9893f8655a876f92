"""`evalkit refine` over a real emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit.cli._refine  # noqa: F401  (registers the command until evalkit.cli imports it)
from evalkit import Client
from evalkit.cli import app
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid
from evalkit.runner import RunOptions, run_grid
from tests.refine.conftest import NASTALIQ_FEEDBACK, SCORECARD, Demo, demo_grid

FAST = ("--poll-interval", "0.02")


@pytest.fixture
def env(emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)


def test_refine_with_feedback_prints_the_diff_and_lost_edits(env: None, demo: Demo) -> None:
    args = ["refine", "-a", demo.assistant_id, "--feedback", NASTALIQ_FEEDBACK]
    result = CliRunner().invoke(app, [*args, "--store", str(demo.store), *FAST])
    assert result.exit_code == 0, result.output
    assert "version 2 -> 3" in result.output
    assert f"+{NASTALIQ_FEEDBACK}" in result.output
    assert "agent.greetingInstructions" in result.output


def test_refine_from_a_file_and_from_a_graded_run(
    env: None, client: Client, demo: Demo, tmp_path: Path
) -> None:
    feedback = tmp_path / "feedback.txt"
    feedback.write_text("Speak slowly.\n", encoding="utf-8")
    store = str(demo.store)
    runner = CliRunner()
    first = runner.invoke(
        app,
        [
            "refine",
            "-a",
            demo.assistant_id,
            "--feedback-file",
            str(feedback),
            "--store",
            store,
            *FAST,
        ],
    )
    assert first.exit_code == 0, first.output
    grid: Grid = demo_grid(repeats=1).sample(4, seed=1)
    run_grid(
        grid,
        demo.assistant_id,
        client=client,
        store=demo.store,
        run_id="before",
        options=RunOptions(progress=False),
    )
    args = ["refine", "-a", demo.assistant_id, "--suggest-from", "before", "--store", store]
    second = runner.invoke(app, [*args, "--scorecard", str(SCORECARD), *FAST])
    assert second.exit_code == 0, second.output
    assert "suggested feedback" in second.output
    assert "Urdu (Nastaliq) script" in second.output
    assert "version 3 -> 4" in second.output


def test_feedback_sources_are_exclusive_and_errors_are_clear(
    env: None, client: Client, tmp_path: Path
) -> None:
    runner = CliRunner()
    both = runner.invoke(app, ["refine", "-a", "x", "--feedback", "a", "--suggest-from", "r"])
    assert both.exit_code == 2
    assert "exactly one" in both.output
    made = client.create_assistant(
        "Hand made",
        {
            "agent": {"instructions": "Hi."},
            "llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}},
        },
    )
    refused = runner.invoke(
        app, ["refine", "-a", made.id, "--feedback", "Be brief.", "--store", str(tmp_path)]
    )
    assert refused.exit_code == 1
    assert "only built assistants" in refused.output
