"""Group commit: coroutines hand lines to one committer thread, which makes every waiting line
durable in one step (a local journal: writes + one fsync; an object store: one PUT) and only
then wakes them. A line is reported durable only after a commit that began after it was queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._errors import StoreError

__all__ = ["GroupCommitter", "Pending"]


@dataclass(slots=True)
class Pending:
    """A line waiting for the committer, and how to tell its coroutine it is durable."""

    line: bytes
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    on_durable: Callable[[], None] | None
    error: BaseException | None = None


def _settle(batch: list[Pending]) -> None:
    """Resolve a committed batch's futures (runs in their event loop)."""
    for item in batch:
        if item.future.done():  # the awaiting task was cancelled; the line is written anyway
            continue
        if item.error is not None:
            item.future.set_exception(item.error)
        else:
            item.future.set_result(None)


class GroupCommitter:
    """The committer thread and its queue; subclasses say how a batch is made durable."""

    path: Any  # named in errors
    #: Seconds the committer waits after the first line of a batch for more to join it (0: it
    #: commits what is waiting at once). Worth it where each commit is a request, not an fsync.
    linger: float = 0.0

    def __init__(self, thread_name: str) -> None:
        self._thread_name = thread_name
        self._queue_lock = threading.Condition()
        self._queue: list[Pending] = []
        self._unsettled = 0  # queued or being committed
        self._committer: threading.Thread | None = None
        self._stopping = False

    def _accepting(self) -> bool:
        """False once closed."""
        raise NotImplementedError

    def _write_batch(self, batch: list[Pending]) -> None:
        """Make every line of ``batch`` durable; put a failure on the items (never raise)."""
        raise NotImplementedError

    async def aappend(self, line: bytes, on_durable: Callable[[], None] | None = None) -> None:
        """Queue ``line``; returns once it is durable, without blocking the event loop.

        The committer commits every waiting line at once, then calls ``on_durable`` (in its
        thread) and wakes the awaiting coroutines, one hop back to each loop per batch. If the
        awaiting task is cancelled the line is still written.
        """
        loop = asyncio.get_running_loop()
        item = Pending(line, loop, loop.create_future(), on_durable)
        with self._queue_lock:
            if not self._accepting() or self._stopping:
                raise StoreError(f"{self.path}: the journal is closed", str(self.path))
            self._queue.append(item)
            self._unsettled += 1
            if self._committer is None or not self._committer.is_alive():
                self._committer = threading.Thread(target=self._commit_loop, name=self._thread_name)
                self._committer.daemon = True  # a forgotten writer never blocks exit
                self._committer.start()
            self._queue_lock.notify_all()
        await item.future

    def _commit_loop(self) -> None:
        while True:
            with self._queue_lock:
                while not self._queue and not self._stopping:
                    self._queue_lock.wait()
                if not self._queue:
                    return
                if self.linger > 0 and not self._stopping:  # let more lines join the batch
                    deadline = time.monotonic() + self.linger
                    while not self._stopping and (left := deadline - time.monotonic()) > 0:
                        self._queue_lock.wait(left)
                batch, self._queue = self._queue, []
            try:
                self._commit(batch)
            finally:
                with self._queue_lock:
                    self._unsettled -= len(batch)
                    self._queue_lock.notify_all()

    def _commit(self, batch: list[Pending]) -> None:
        """Make the batch durable, then report back; never raises."""
        self._write_batch(batch)
        for item in batch:
            if item.error is None and item.on_durable is not None:
                try:
                    item.on_durable()
                except BaseException as exc:
                    item.error = exc
        by_loop: dict[asyncio.AbstractEventLoop, list[Pending]] = {}
        for item in batch:
            by_loop.setdefault(item.loop, []).append(item)
        for loop, items in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting
                loop.call_soon_threadsafe(_settle, items)

    def _drain(self) -> None:
        """Wait until every line handed to :meth:`aappend` is committed (or failed)."""
        if threading.current_thread() is self._committer:
            return
        with self._queue_lock:
            while self._unsettled:
                self._queue_lock.wait()

    def _stop_committer(self) -> None:
        with self._queue_lock:
            self._stopping = True
            self._queue_lock.notify_all()
            thread = self._committer
        if thread is not None and thread is not threading.current_thread():
            thread.join()
