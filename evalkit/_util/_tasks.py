"""Run sibling tasks together: all finish, or none is left running."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["cancel_and_wait", "gather_or_cancel"]

logger = logging.getLogger("evalkit")

T = TypeVar("T")


async def gather_or_cancel(tasks: Sequence[asyncio.Task[T]]) -> list[T]:
    """Every task's result in order; when one fails (or the caller is cancelled) the others
    are cancelled and awaited before the error propagates, so none outlives the call (a run
    cancelled this way finalizes its manifest before the error reaches the caller)."""
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await cancel_and_wait(tasks)
        raise


async def cancel_and_wait(tasks: Sequence[asyncio.Task[T]], message: str | None = None) -> None:
    """Cancel ``tasks`` (with ``message``, say a :func:`~._progress.planned_stop`) and wait
    until each has ended (a late error is logged, not raised)."""
    for task in tasks:
        task.cancel(message)
    if not tasks:
        return
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            logger.info("a cancelled task ended with %r", task.exception())
