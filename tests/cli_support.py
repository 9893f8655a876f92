"""The ``evalkit emulator`` command in a child process, for the command-line tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def emulator_command(
    *options: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """``python -m evalkit emulator --port 0 *options`` (unbuffered, this checkout importable);
    terminated on the way out."""
    child_env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    child_env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "emulator", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env,
        cwd=cwd,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def read_exports(proc: subprocess.Popen[str]) -> dict[str, str]:
    """The two ``export NAME=value`` lines the command prints first, as a dict."""
    assert proc.stdout is not None
    lines = [proc.stdout.readline().strip() for _ in range(2)]
    assert all(line.startswith("export ") for line in lines), lines
    return dict(line.removeprefix("export ").split("=", 1) for line in lines)
