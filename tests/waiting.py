"""Bounded polls for tests: wait for a condition instead of sleeping for a guessed time.

Plain functions (no pytest import): ``runner_child.py``'s helpers may use them too. A poll that
runs out raises ``TimeoutError`` naming what it waited for, so a hung test fails with a reason.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 15.0
DEFAULT_INTERVAL = 0.01


def wait_until(
    predicate: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    what: str = "",
    interval: float = DEFAULT_INTERVAL,
) -> T:
    """Call ``predicate`` until it returns something truthy; that value.

    Raises ``TimeoutError`` after ``timeout`` seconds. ``predicate`` may itself raise (e.g.
    ``pytest.fail`` when a child process died) to end the wait early.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what or predicate}")
        time.sleep(interval)


async def await_until(
    predicate: Callable[[], T | Awaitable[T]],
    limit: float = DEFAULT_TIMEOUT,
    *,
    what: str = "",
    interval: float = DEFAULT_INTERVAL,
) -> T:
    """``wait_until`` for coroutines, ``limit`` being the timeout in seconds.

    A coroutine function is awaited; a plain ``predicate`` runs on a worker thread (it may block
    on HTTP, e.g. ``EmulatorServer.stats``). The loop keeps running between polls.
    """
    deadline = time.monotonic() + limit
    while True:
        if inspect.iscoroutinefunction(predicate):
            value = await predicate()
        else:
            value = await asyncio.to_thread(predicate)
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {limit:g} s waiting for {what or predicate}")
        await asyncio.sleep(interval)
