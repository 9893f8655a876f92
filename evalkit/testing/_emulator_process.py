"""A test session's shared emulator, as a process of its own (``python -m
evalkit.testing._emulator_process``; started by :mod:`._shared`).

Reads one JSON line of settings (with the project key, which so never appears in a process
list or a file) on standard input, prints one JSON line with the server's root URL, and
serves until SIGTERM or until the process it watches (the pytest-xdist controller) is gone.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from typing import Any

from ..emulator import EmulatorSettings, serve

_WATCH_EVERY_S = 0.5


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main() -> None:
    config: dict[str, Any] = json.loads(sys.stdin.readline())
    watch = int(config.pop("watch_pid"))
    api_key = str(config.pop("api_key"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with serve(api_key=api_key, settings=EmulatorSettings(**config)) as emulator:
        sys.stdout.write(json.dumps({"url": emulator.url}) + "\n")
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # the reader has gone: nothing more may go to that pipe
        os.close(devnull)
        while not stop.wait(_WATCH_EVERY_S):
            if not _alive(watch):
                break


if __name__ == "__main__":
    main()
