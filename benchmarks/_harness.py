"""What the benchmark scripts share: an emulator in a child process, a built assistant, a grid.

The scripts run as ``python benchmarks/<name>.py``, so this folder is on ``sys.path``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import httpx

from evalkit.grid import Grid, load_personas

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTIONS = "You remind {{name}} of an appointment on {{date}}. Confirm yes or no. Say goodbye."
_SERVER_CODE = (
    "import resource; soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard)); "
    "import typer; from evalkit.cli._emulator_command import emulator; typer.run(emulator)"
)


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to the hard limit; the new limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def start_emulator(*args: str) -> tuple[subprocess.Popen[str], str, str]:
    """``evalkit emulator --port 0 --seed 1 ARGS`` in a child process; its base URL and key."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_CODE, "--port", "0", "--seed", "1", *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    settings = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(2))
    return proc, settings["EVALKIT_BASE_URL"], settings["EVALKIT_API_KEY"]


def build_assistant(base: str, key: str, records: list[dict[str, str]]) -> str:
    """An assistant built from a brief (admin API) with :data:`INSTRUCTIONS`; its id."""
    admin = base.rsplit("/v1", 1)[0] + "/_emulator"
    body = {
        "name": "bench",
        "brief": {"context": "Clinic reminders", "sampleRows": records},
        "instructions": INSTRUCTIONS,
        "initialGreeting": True,
    }
    response = httpx.post(f"{admin}/builds", json=body, headers={"Authorization": f"Bearer {key}"})
    response.raise_for_status()
    return str(response.json()["realtimeAssistantId"])


def make_grid(n: int) -> Grid:
    """A grid of exactly ``n`` conversations (10 personas x 10 records x repeats)."""
    personas = load_personas(ROOT / "personas")[:10]
    records = [{"name": f"Caller {i}", "date": "Monday"} for i in range(10)]
    grid = Grid(personas, variables=records, contexts=["Clinic reminder"], repeats=max(1, n // 100))
    if len(grid) != n:
        raise SystemExit(f"--conversations must be a multiple of 100, got {n}")
    return grid
