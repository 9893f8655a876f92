"""Run a coroutine from synchronous code, in a script or inside Jupyter's running loop.

``asyncio.run`` fails when a loop is already running (Jupyter, IPython). Then the coroutine
runs on a worker thread with a loop of its own; Ctrl-C (a kernel interrupt) in the caller's
thread cancels it there and waits for its cleanup before re-raising. No nest_asyncio.

In a script, the first Ctrl-C cancels the coroutine as ``asyncio.run`` does, but a second one
does not raise ``KeyboardInterrupt`` wherever the main thread happens to be (``asyncio.run``'s
way): raised inside the event loop's own bookkeeping it can drop a task's wake-up, and the
loop then waits for that task forever while closing. Further Ctrl-Cs are absorbed while the
cancelled run cleans up, as in a notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger("evalkit")


def run_sync(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``make_coro()`` to completion and return its result."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        in_loop = False
    else:
        in_loop = True
    if in_loop:
        return _run_in_thread(make_coro)
    if threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        return _run_patiently(make_coro)
    return asyncio.run(make_coro())  # Ctrl-C is someone else's to handle here


#: Further Ctrl-Cs absorbed while a cancelled run cleans up (writes its tables, deletes
#: clones); one more than this gives up waiting.
_CLEANUP_PATIENCE = 2


def _absorb_or_give_up(extra: int) -> None:
    """The ``extra``-th Ctrl-C after the first: said and absorbed, or, past the patience,
    ``KeyboardInterrupt``."""
    if extra > _CLEANUP_PATIENCE:
        raise KeyboardInterrupt
    logger.warning("Ctrl-C again: still finishing the run's clean-up (a moment)")


def _wait_for_cleanup(finished: threading.Event) -> None:
    """Wait for a cancelled run's cleanup; a second Ctrl-C must not cut it short."""
    extra = 0
    while True:
        try:
            finished.wait()
            return
        except KeyboardInterrupt:
            extra += 1
            _absorb_or_give_up(extra)


def _run_patiently(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run`` with a SIGINT handler of its own: the first Ctrl-C cancels the main
    task (from the loop, by ``call_soon_threadsafe``); more are absorbed while it cleans up,
    until :data:`_CLEANUP_PATIENCE` is exhausted."""
    interrupts = 0
    main: list[asyncio.Task[T]] = []

    with asyncio.Runner() as runner:
        loop = runner.get_loop()

        def on_sigint(signum: int, frame: object) -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts == 1 and main and not main[0].done():
                loop.call_soon_threadsafe(main[0].cancel)
                return
            if not main or main[0].done():
                raise KeyboardInterrupt
            _absorb_or_give_up(interrupts - 1)

        async def as_main() -> T:
            task = asyncio.current_task()
            assert task is not None
            main.append(task)
            return await make_coro()

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            return runner.run(as_main())
        except asyncio.CancelledError:
            if interrupts:
                raise KeyboardInterrupt from None
            raise
        finally:
            signal.signal(signal.SIGINT, previous)


def _run_in_thread(make_coro: Callable[[], Coroutine[Any, Any, T]]) -> T:
    loop = asyncio.new_event_loop()
    task_box: list[asyncio.Task[T]] = []
    outcome: list[tuple[bool, Any]] = []
    started = threading.Event()
    finished = threading.Event()

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
                finished.set()

    thread = threading.Thread(target=worker, name="evalkit-run", daemon=True)
    thread.start()
    try:
        # an Event, not Thread.join: an interrupted join can mark a live thread as stopped
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:
        started.wait()
        if task_box:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing to cancel
                loop.call_soon_threadsafe(task_box[0].cancel)
        _wait_for_cleanup(finished)
        raise
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value
