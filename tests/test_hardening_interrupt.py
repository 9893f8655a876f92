"""Issue 14, item 5: a second Ctrl-C within 0.3 s never leaves a run's manifest unfinalized.

A real child process (``runner_child.py``) runs a grid against a slow emulator and gets two
SIGINTs; the run must end interrupted, finalized, with its tables written and every journal
line accounted for.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

from evalkit.emulator import EmulatorServer
from evalkit.store import load_run

from .runner_fixtures import emulator_fixture
from .runner_support import (
    build_assistant,
    communicate,
    journal_lines,
    reap,
    start_child,
    wait_for_child,
    wait_idle,
)

slow_emu = emulator_fixture(time_scale=0.01, seed=5, turn_delay=4.0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("gap", "target"),
    [
        pytest.param(0.0, "draft", id="at-once-draft"),
        pytest.param(0.05, "variant", id="50ms-clone"),
        pytest.param(0.15, "draft", id="150ms-draft"),
        pytest.param(0.29, "variant", id="290ms-clone"),
        pytest.param(0.05, "notebook", id="50ms-notebook"),
        pytest.param(0.2, "notebook", id="200ms-notebook"),
    ],
)
def test_a_second_ctrl_c_still_leaves_the_run_finalized(
    slow_emu: EmulatorServer, tmp_path: Path, gap: float, target: str
) -> None:
    """``notebook``: run_grid called on a running loop (a worker thread), as in Jupyter."""
    assistant = build_assistant(slow_emu)
    spec: dict[str, Any] = {
        "store": str(tmp_path),
        "run_id": "twice",
        "assistant_id": assistant,
        "personas": 5,
        "repeats": 20,
        "concurrency": 6,
        "target": {"variant": "v", "instructions": "Be brief, {{name}}."}
        if target == "variant"
        else "draft",
        "in_loop": target == "notebook",
    }
    run_dir = tmp_path / "twice"
    child = start_child(slow_emu, spec)
    try:
        wait_for_child(
            child,
            lambda: journal_lines(run_dir) >= 2 and slow_emu.stats()["active"] >= 2,
            "two conversations recorded and streams open",
        )
        child.send_signal(signal.SIGINT)
        time.sleep(gap)
        child.send_signal(signal.SIGINT)
        out, err = communicate(child, timeout=60)
    finally:
        reap(child)
    # 130: main() caught the interrupt; -SIGINT: the second one came while Python was exiting
    assert child.returncode in (130, -signal.SIGINT), f"{out}\n{err}"
    assert "interrupted" in out
    wait_idle(slow_emu)

    run = load_run("twice", store=tmp_path)
    assert run.manifest["finalized_at"] is not None, err
    assert run.manifest["outcome"] == "interrupted"
    assert not run.from_journal  # the tables were written from the whole journal
    assert run.manifest["journal"]["lines"] == journal_lines(run_dir)
    assert len(run.conversations) == journal_lines(run_dir) >= 2
