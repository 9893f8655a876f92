"""A closed pipe (``evalkit runs | head -1``) ends every command quietly, as a Unix tool does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.demo import demo_scorecard

COMMANDS = {
    "runs": ["runs", "--store", "{store}"],
    "runs --json": ["runs", "--store", "{store}", "--json"],
    "personas list": ["personas", "list"],
    "scorecard validate": ["scorecard", "validate", str(demo_scorecard())],
    "--help": ["--help"],
}


def _into_a_closed_pipe(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``evalkit ARGS`` with stdout a pipe whose reader is already gone."""
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.close()  # `| head -1` after its line, before evalkit writes
    _, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(args, process.returncode, "", stderr)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_pipe_ends_the_command_without_an_error(name: str, tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    args = [a.format(store=tmp_path / "runs") for a in COMMANDS[name]]
    done = _into_a_closed_pipe(args)
    assert "Broken pipe" not in done.stderr
    assert "error" not in done.stderr.lower(), done.stderr
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
    assert done.returncode == 1  # as any click/typer tool: stopped, nothing to report


def test_the_first_line_still_arrives_through_head(tmp_path: Path) -> None:
    shell = f'"{sys.executable}" -m evalkit personas list | head -1'
    done = subprocess.run(
        ["bash", "-c", shell], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 1
    assert done.stderr == ""
