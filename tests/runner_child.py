"""A child process for the runner's kill and Ctrl-C tests: runs one grid with ``run_grid``.

Usage: ``python tests/runner_child.py SPEC_JSON`` where the spec holds ``store``, ``run_id``,
``assistant_id``, ``personas`` (how many), ``repeats``, ``concurrency`` and ``target``
(``"draft"`` or ``{"variant": name, "instructions": text}``) and ``in_loop`` (call the sync
``run_grid`` from a coroutine on a running loop without asyncio's SIGINT handler, as a Jupyter
kernel does); ``kill_at`` (``[commit, "before" | "after"]``, a run at a URL only) SIGKILLs the
process itself just before or just after the journal stores its ``commit``-th object, so a
kill test kills at a chosen point of the run instead of after a sleep. The service comes from
``EVALKIT_BASE_URL`` / ``EVALKIT_API_KEY`` (the default client). Exit codes: 0 the run
finished, 130 interrupted (Ctrl-C), 1 anything else (the traceback is on stderr).
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import os
import signal
import sys
from typing import Any

if __package__:  # imported as ``tests.runner_child``
    from .runner_support import load_grid
else:  # run as ``python tests/runner_child.py``: this folder is on sys.path
    from runner_support import load_grid


def _kill_at(commit: int, when: str) -> None:
    from evalkit.store._object_journal import ObjectJournalWriter

    store = ObjectJournalWriter._store
    stored = 0

    def killing(self: ObjectJournalWriter, data: bytes) -> None:
        nonlocal stored
        if when == "before" and stored + 1 == commit:
            os.kill(os.getpid(), signal.SIGKILL)
        store(self, data)
        stored += 1
        if when == "after" and stored == commit:
            os.kill(os.getpid(), signal.SIGKILL)

    ObjectJournalWriter._store = killing  # type: ignore[method-assign]


def main(spec: dict[str, Any]) -> int:
    from evalkit.runner import RunOptions, run_grid

    if spec.get("kill_at"):
        _kill_at(*spec["kill_at"])
    from evalkit.targets import Variant

    target: Any = spec.get("target", "draft")
    if isinstance(target, dict):
        target = Variant.with_instructions(target["variant"], target["instructions"])

    shard = tuple(spec["shard"]) if spec.get("shard") else None

    def run() -> Any:
        return run_grid(
            load_grid(spec["personas"], spec["repeats"], shard),
            spec["assistant_id"],
            target=target,
            store=spec["store"],
            run_id=spec["run_id"],
            options=RunOptions(concurrency=spec["concurrency"], progress=False),
        )

    async def notebook_cell() -> Any:
        return run()

    try:
        if spec.get("in_loop"):
            loop = asyncio.new_event_loop()
            try:
                result = loop.run_until_complete(notebook_cell())
            finally:
                loop.close()
        else:
            result = run()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        return 130
    print(f"finished {len(result.conversations)}", flush=True)
    return 0


if __name__ == "__main__":
    # a parent that ignores SIGINT (pytest-xdist workers do) passes that on; a terminal does not
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # a parent whose wait ran out sends SIGUSR1 to see where the child hangs
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    print("child ready", flush=True)
    sys.exit(main(json.loads(sys.argv[1])))
