"""``run_sync`` in a script: the first Ctrl-C cancels the coroutine, and a second one at once
does not cut its clean-up short (``asyncio.run`` raises it wherever the main thread is, which
can also drop a task's wake-up and hang the loop while it closes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import asyncio, logging, signal, sys
    from evalkit._util import run_sync

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # xdist workers ignore SIGINT

    async def work():
        print("ready", flush=True)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            print("cancelled", flush=True)
            await asyncio.sleep(1.0)  # a clean-up that takes a moment (finalize, delete clones)
            print("cleaned up", flush=True)
            raise

    try:
        run_sync(work)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


@pytest.mark.parametrize("presses", [2, 3])
def test_more_ctrl_c_while_cleaning_up_are_absorbed(presses: int) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline().strip() == "cancelled"
        for _ in range(presses - 1):  # apart: signals sent at once arrive as one
            child.send_signal(signal.SIGINT)
            time.sleep(0.1)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 130, err
    assert out.split() == ["cleaned", "up", "interrupted"], (out, err)
    assert err.count("Ctrl-C again: still finishing") == presses - 1, err
