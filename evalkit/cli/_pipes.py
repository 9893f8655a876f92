"""A closed pipe ends a command quietly, as a Unix tool does: ``evalkit runs | head -1``.

When the reader of stdout goes away, the next write raises ``BrokenPipeError``. That is not
an error to report: the command stops and typer's own EPIPE handling exits with status 1
without a message (and keeps Python's exit-time flush quiet). A broken pipe anywhere else (a
socket to the service) is still an error with its message.
"""

from __future__ import annotations

import contextlib
import select
import sys

__all__ = ["stdout_reader_gone"]


def _poll_error(fd: int) -> bool:
    """True when the pipe or socket behind ``fd`` reports an error (its reader closed)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def stdout_reader_gone() -> bool:
    """True when nobody reads this process's stdout any more."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if _poll_error(sys.stdout.fileno()):
            return True
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False
    return False
