"""Holding Ctrl-C while a run finalizes, so a second Ctrl-C cannot leave it half-written."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["defer_sigint"]

logger = logging.getLogger("evalkit.runner")


@contextlib.contextmanager
def defer_sigint() -> Iterator[None]:
    """Hold SIGINT for the block, then deliver it to the handler it was meant for.

    Only the main thread receives signals; elsewhere (a worker thread, as in a notebook) this
    does nothing. A held SIGINT is delivered once the block has ended, so Ctrl-C still stops
    the program, just not halfway through the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[FrameType | None] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        if not held:
            logger.warning("Ctrl-C held until the run is finalized (a moment)")
        held.append(frame)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held and callable(previous):
        previous(signal.SIGINT, held[0])
    elif held and previous == signal.SIG_DFL:
        raise KeyboardInterrupt
