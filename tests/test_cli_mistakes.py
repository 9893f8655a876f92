"""The first hour's common mistakes, through the command line: each ends in a short message that
names the problem, a distinct exit code, and no traceback."""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import ExitCode, app
from evalkit.emulator import EmulatorServer, serve

from .waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent
COOPERATIVE = ROOT / "personas" / "cooperative.yaml"


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    with serve(time_scale=0.002, seed=5) as server:
        yield server


@pytest.fixture
def env(emu: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    monkeypatch.setenv("EVALKIT_BASE_URL", emu.base_url)
    monkeypatch.setenv("EVALKIT_API_KEY", emu.api_key)
    monkeypatch.delenv("EVALKIT_DEBUG", raising=False)
    return emu


def _assistant(emu: EmulatorServer) -> str:
    built = emu.build(
        "mistakes",
        {"context": "a reminder", "sampleRows": [{"customer_name": "Ayesha"}]},
        "Remind {{customer_name}} in Urdu.",
    )
    return str(built["realtimeAssistantId"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _short_error(output: str, *needles: str) -> None:
    assert "Traceback" not in output, output
    assert "evalkit: error:" in output, output
    for needle in needles:
        assert needle in output, output
    assert len(output.strip().splitlines()) <= 6, output


def _run_args(aid: str, store: Path, *extra: str) -> list[str]:
    return ["run", "-a", aid, "-p", str(COOPERATIVE), "--context", "reminder", "--store",
            str(store), *extra]  # fmt: skip


def test_wrong_port_names_host_and_port_and_gives_up_quickly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = _free_port()
    monkeypatch.setenv("EVALKIT_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("EVALKIT_API_KEY", "sk_api_" + "x" * 32)
    with caplog.at_level(logging.INFO, logger="evalkit.api"):
        result = CliRunner().invoke(app, _run_args("some-id", tmp_path))
    assert result.exit_code == ExitCode.ERROR
    _short_error(result.output, f"127.0.0.1:{port}", "emulator running", "evalkit emulator")
    # gives up quickly: the waits between attempts the client logged, not a wall-clock time a
    # loaded machine stretches (the default policy would wait 3.5-5 s)
    waits = [
        float(m.group(1))
        for r in caplog.records
        if (m := re.search(r"retrying in ([0-9.]+)s", r.getMessage()))
    ]
    assert waits == [0.25, 0.5, 1.0], waits


def test_wrong_key_says_check_the_key(env: EmulatorServer, tmp_path: Path) -> None:
    aid = _assistant(env)
    os.environ["EVALKIT_API_KEY"] = "sk_api_" + "y" * 32  # restored by monkeypatch
    result = CliRunner().invoke(app, _run_args(aid, tmp_path))
    assert result.exit_code == ExitCode.ABORTED
    _short_error(result.output, "401", "EVALKIT_API_KEY")
    assert "y" * 32 not in result.output


def test_unknown_assistant_points_to_the_list(env: EmulatorServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, _run_args("no-such-assistant", tmp_path))
    assert result.exit_code == ExitCode.ERROR
    _short_error(result.output, "no-such-assistant", "EVALKIT_API_KEY")
    shown = CliRunner().invoke(app, ["assistants", "show", "no-such-assistant"])
    assert shown.exit_code == ExitCode.ERROR
    _short_error(shown.output, "404", "evalkit assistants list")


def test_bad_persona_file_names_the_file(env: EmulatorServer, tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("label: broken\ndescription: no behavior here\n", encoding="utf-8")
    args = ["run", "-a", "x", "-p", str(bad), "--context", "c", "--store", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == ExitCode.ERROR
    _short_error(result.output, "broken.yaml", "behavior")


def test_too_long_variable_names_the_field(env: EmulatorServer, tmp_path: Path) -> None:
    csv = tmp_path / "contacts.csv"
    csv.write_text("customer_name,notes\nAyesha," + "x" * 3100 + "\n", encoding="utf-8")
    args = [*_run_args("x", tmp_path), "--variables", str(csv)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == ExitCode.ERROR
    _short_error(result.output, "variables", "3000")


def test_changed_grid_on_resume_says_what_changed(env: EmulatorServer, tmp_path: Path) -> None:
    aid = _assistant(env)
    runner = CliRunner()
    first = runner.invoke(app, [*_run_args(aid, tmp_path), "--run-id", "r"])
    assert first.exit_code == ExitCode.OK, first.output
    second = runner.invoke(app, [*_run_args(aid, tmp_path), "--run-id", "r", "--repeats", "2"])
    assert second.exit_code == ExitCode.ERROR
    _short_error(second.output, "repeats changed from 1 to 2")


def test_debug_shows_the_traceback(env: EmulatorServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--debug", *_run_args("no-such-assistant", tmp_path)])
    assert result.exit_code != 0
    assert result.exception is not None
    assert type(result.exception).__name__ == "TargetError"


def test_budget_partial_run_says_how_to_resume_and_fail_on_fails(
    env: EmulatorServer, tmp_path: Path
) -> None:
    aid = _assistant(env)
    args = [*_run_args(aid, tmp_path), "--repeats", "3", "--run-id", "b"]
    runner = CliRunner()
    partial = runner.invoke(app, [*args, "--max-conversations", "2"])
    assert partial.exit_code == ExitCode.PARTIAL, partial.output
    assert "2 of 3 conversations recorded" in partial.output
    assert "resume with: evalkit run" in partial.output
    assert "--max-conversations" not in partial.output.split("resume with:")[1]
    done = runner.invoke(app, [*args, "--fail-on", "done"])
    assert done.exit_code == ExitCode.FAIL_ON, done.output
    assert "3 of 3 conversations recorded" in done.output
    listing = runner.invoke(app, ["runs", "--store", str(tmp_path)])
    assert listing.exit_code == 0
    line = next(x for x in listing.output.splitlines() if x.startswith("b "))
    assert "complete" in line
    assert "3/3" in line
    assert max(len(x) for x in listing.output.splitlines()) <= 100


def test_bad_fail_on_is_a_usage_error(env: EmulatorServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, [*_run_args("x", tmp_path), "--fail-on", "errors"])
    assert result.exit_code == ExitCode.USAGE
    assert "errors" in result.output
    assert "dropped" in result.output


def test_busy_port_names_the_port(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = CliRunner().invoke(app, ["emulator", "--port", str(port)])
    assert result.exit_code != 0
    assert f"port {port}" in result.output
    assert "--port 0" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_ctrl_c_reports_what_was_kept(tmp_path: Path) -> None:
    slow = serve(time_scale=1.0, seed=3, turn_delay=0.4)
    with slow:
        built = slow.build(
            "slow", {"context": "c", "sampleRows": [{"a": "b"}]}, "Remind the caller."
        )
        child_env = {
            **os.environ,
            "EVALKIT_BASE_URL": slow.base_url,
            "EVALKIT_API_KEY": slow.api_key,
            "PYTHONPATH": str(ROOT),
        }
        args = _run_args(str(built["realtimeAssistantId"]), tmp_path, "--repeats", "6")
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalkit", *args, "--run-id", "c", "--concurrency", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=child_env,
            cwd=tmp_path,
        )
        # interrupt once the run has kept something: its first conversation is journaled
        journal = tmp_path / "c" / "journal.jsonl"
        wait_until(
            lambda: proc.poll() is not None or (journal.exists() and journal.read_bytes()),
            30,
            what="the run's first conversation recorded",
        )
        assert proc.poll() is None, proc.communicate()[0]
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.INTERRUPTED, output
    assert "Traceback" not in output
    assert "Interrupted:" in output
    assert "of 6 conversations recorded" in output
    assert "Resume with: evalkit run" in output
    assert "--run-id c" in output
