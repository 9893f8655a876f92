"""`evalkit personas generate` and `evalkit personas search` against the loopback emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.cli._emulator_command import settings_lines
from evalkit.demo._story import demo_scorecard
from evalkit.grid import load_personas

from .conftest import World

runner = CliRunner()


@pytest.fixture
def env(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    for line in settings_lines(world.service.emulator):
        key, _, value = line.partition("=")
        monkeypatch.setenv(key, value)


@pytest.mark.usefixtures("env")
def test_generate_writes_checked_persona_files(world: World, tmp_path: Path) -> None:
    out = tmp_path / "generated"
    result = runner.invoke(
        app,
        [
            "personas",
            "generate",
            "-a",
            world.service.assistant_id,
            "-s",
            str(demo_scorecard()),
            "-n",
            "4",
            "--pilot",
            "0",
            "--axis",
            "language=english,roman-urdu",
            "-o",
            str(out),
            "--store",
            str(world.store),
            "--run-prefix",
            "cli-gen",
        ],
    )
    assert result.exit_code == 0, result.output
    loaded = load_personas(out)
    assert loaded
    assert {(p.traits or {})["language"] for p in loaded} <= {"english", "roman-urdu"}
    assert "persona file(s) written" in result.output


@pytest.mark.usefixtures("env")
def test_search_estimates_reports_and_writes_the_found_callers(
    world: World, tmp_path: Path
) -> None:
    out = tmp_path / "found"
    variables = tmp_path / "contacts.json"
    import json

    from evalkit.demo._story import CONTACTS

    variables.write_text(json.dumps(CONTACTS), encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "personas",
            "search",
            "-a",
            world.service.assistant_id,
            "-s",
            str(demo_scorecard()),
            "--variables",
            str(variables),
            "--rounds",
            "2",
            "--seed",
            "3",
            "-o",
            str(out),
            "--store",
            str(world.store),
            "--run-prefix",
            "cli-search",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "up to" in result.output
    assert "round 1:" in result.output
    assert "break the draft" in result.output
    assert len(load_personas(out)) >= 1
