"""What the processes of one pytest session share: a folder, a lock, values made once, and an
emulator that outlives any one pytest-xdist worker. Standard library only (the plugin's
controller process stops the emulator without importing the rest of evalkit).

Without xdist a session is one process and none of this is needed. With it, the controller
gives every worker the same folder (``SharedFolder``) and a project key for the emulator
(over xdist's channel, never on disk). The first worker that needs the emulator starts it as
a process of its own (:mod:`._emulator_process`), so it serves every worker until the session
ends, however the tests are spread: the controller stops it at the end, and it stops itself
if the controller goes away.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["EMULATOR_FILE", "SharedFolder", "stop_shared_emulator"]

#: The shared emulator's address and process id (never its key), in the shared folder.
EMULATOR_FILE: Final = "emulator.json"
_START_TIMEOUT_S: Final = 60.0
_STOP_TIMEOUT_S: Final = 10.0


@dataclass(frozen=True)
class SharedFolder:
    """The folder every worker of one session shares (made on first use)."""

    path: Path

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """An exclusive lock across the session's processes (``flock`` on ``<name>.lock``)."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / f"{name}.lock", "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def once(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()``'s JSON value, made by the first process that asks, read by the rest."""
        if not name or any(not (ch.isalnum() or ch in "-_.") for ch in name):
            raise ValueError(f"name must be letters, digits, '-', '_' or '.', got {name!r}")
        path = self.path / "once" / f"{name}.json"
        with self.lock(f"once-{name}"):
            if path.exists():
                return json.loads(path.read_text(encoding="utf-8"))
            value = make()
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(value), encoding="utf-8")
            tmp.replace(path)
            return value

    def emulator(self, settings: dict[str, Any], api_key: str, watch_pid: int) -> str:
        """The root URL of the session's emulator, started here if no process has yet."""
        with self.lock("emulator"):
            info = self.path / EMULATOR_FILE
            if info.exists():
                known = json.loads(info.read_text(encoding="utf-8"))
                if _alive(int(known["pid"])):
                    return str(known["url"])
            url, pid = _start_emulator(settings, api_key, watch_pid)
            info.write_text(json.dumps({"url": url, "pid": pid}), encoding="utf-8")
            return url


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_emulator(settings: dict[str, Any], api_key: str, watch_pid: int) -> tuple[str, int]:
    """Start ``python -m evalkit.testing._emulator_process``; its settings and key go in on
    its standard input, its address comes back on its standard output."""
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.testing._emulator_process"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a worker's Ctrl-C or exit does not take it down
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps({**settings, "api_key": api_key, "watch_pid": watch_pid}))
    process.stdin.write("\n")
    process.stdin.close()
    deadline = time.monotonic() + _START_TIMEOUT_S
    line = ""
    while time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline()
        if line.strip():
            break
    if not line.strip():
        process.kill()
        raise RuntimeError(
            f"the session's emulator did not start within {_START_TIMEOUT_S:.0f} s "
            f"(exit code {process.poll()})"
        )
    process.stdout.close()
    return str(json.loads(line)["url"]), process.pid


def stop_shared_emulator(folder: Path) -> None:
    """Stop the session's emulator if one was started under ``folder`` (the controller, at
    the end of the session)."""
    info = folder / EMULATOR_FILE
    if not info.exists():
        return
    pid = int(json.loads(info.read_text(encoding="utf-8"))["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    while _alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    info.unlink(missing_ok=True)
