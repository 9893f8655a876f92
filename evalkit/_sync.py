"""Run a coroutine from synchronous code, in a script or inside Jupyter's running loop.

``asyncio.run`` fails when a loop is already running (Jupyter, IPython). Then the coroutine
runs on a worker thread with a loop of its own; Ctrl-C (a kernel interrupt) in the caller's
thread cancels it there and waits for its cleanup before re-raising. No nest_asyncio.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``make_coro()`` to completion and return its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())
    return _run_in_thread(make_coro)


def _run_in_thread(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    loop = asyncio.new_event_loop()
    task_box: list[asyncio.Task[T]] = []
    outcome: list[tuple[bool, Any]] = []
    started = threading.Event()

    def worker() -> None:
        asyncio.set_event_loop(loop)
        try:
            task = loop.create_task(make_coro())
            task_box.append(task)
            started.set()
            outcome.append((True, loop.run_until_complete(task)))
        except BaseException as exc:
            outcome.append((False, exc))
        finally:
            started.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    thread = threading.Thread(target=worker, name="evalkit-run", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except KeyboardInterrupt:
        started.wait()
        if task_box:
            loop.call_soon_threadsafe(task_box[0].cancel)
        thread.join()
        raise
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value
