"""Ctrl-C during `evalkit tune` (a real child process on a slow emulator): the command ends
interrupted and no temporary clone is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.api import Client
from evalkit.emulator import EmulatorServer
from evalkit.targets import CLONE_PREFIX

from ..runner_fixtures import emulator_fixture
from ..runner_support import PERSONAS_DIR, build_assistant, reap, wait_for_child, wait_idle

ROOT = Path(__file__).resolve().parents[2]
slow_emu = emulator_fixture(time_scale=0.01, seed=21, turn_delay=4.0)

VARIANTS = """
variants:
  - name: polite
    instructions: "You remind {{name}} of an appointment on {{date}}. Confirm yes or no. Thank them."
  - name: brief
    patch: {agent: {instructions: "Remind {{name}} about {{date}}."}}
"""


def clone_names(emu: EmulatorServer) -> list[str]:
    client = Client(emu.base_url, emu.api_key)
    return [a.name for a in client.list_assistants() if a.name.startswith(CLONE_PREFIX)]


@pytest.mark.slow
def test_ctrl_c_leaves_no_clone(slow_emu: EmulatorServer, tmp_path: Path) -> None:
    assistant = build_assistant(slow_emu)
    variants = tmp_path / "variants.yaml"
    variants.write_text(VARIANTS, encoding="utf-8")
    contacts = tmp_path / "contacts.csv"
    contacts.write_text("name,date\nAli,Monday\nSara,Friday\n", encoding="utf-8")
    personas = tmp_path / "personas"
    personas.mkdir()
    for label in ("cooperative", "hostile", "confused-elderly"):
        (personas / f"{label}.yaml").write_bytes((PERSONAS_DIR / f"{label}.yaml").read_bytes())
    env = {
        **os.environ,
        "EVALKIT_BASE_URL": slow_emu.base_url,
        "EVALKIT_API_KEY": slow_emu.api_key,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": str(ROOT),
    }
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalkit",
            "tune",
            "--assistant",
            assistant,
            "--variants",
            str(variants),
            "--scorecard",
            str(ROOT / "scorecards" / "appointment-reminder-ur.yaml"),
            "--personas",
            str(personas),
            "--variables",
            str(contacts),
            "--context",
            "A clinic reminder.",
            "--max-repeats",
            "3",
            "--no-judge",
            "--store",
            str(tmp_path / "runs"),
            "--output",
            str(tmp_path / "tune.json"),
            "--concurrency",
            "4",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        wait_for_child(
            child,
            lambda: clone_names(slow_emu) and slow_emu.stats()["active"] >= 1,
            "an arm running on its clone",
        )
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        reap(child)
    assert child.returncode == 130, f"{out}\n{err}"
    assert "Traceback" not in err
    wait_idle(slow_emu)
    assert clone_names(slow_emu) == []
    assert not (tmp_path / "tune.json").exists()
