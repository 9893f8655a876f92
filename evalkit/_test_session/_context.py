"""What the pytest plugin hands to the assertions of the test that is running: the session's
choice for insufficient evidence, where reports go, and who records each check.

A :class:`~contextvars.ContextVar`, set by the plugin around each test's setup and call and
reset after, so nothing is global and an assertion outside pytest (a notebook, a script) sees
none and raises :class:`~evalkit.testing.InsufficientEvidence` instead of guessing. Standard
library only: the plugin sets it around every test of every project it is loaded in, so it
must cost nothing to import (``evalkit.testing`` itself loads pandas).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CheckContext", "check_context", "current_context"]


@dataclass(frozen=True)
class CheckContext:
    """The running test's settings: ``test_id`` (its node id), ``insufficient`` (the session's
    choice), ``report_dir`` (called when a report is to be written: the folder, or None for
    none; a callable so that a test that writes none makes no folder) and ``record`` (called
    with every check, passed or not, before it raises)."""

    test_id: str
    insufficient: str
    report_dir: Callable[[], Path | None]
    record: Callable[[Any], None]


_CURRENT: ContextVar[CheckContext | None] = ContextVar("evalkit_check_context", default=None)


def current_context() -> CheckContext | None:
    """The running test's context (None outside the evalkit pytest plugin)."""
    return _CURRENT.get()


@contextlib.contextmanager
def check_context(context: CheckContext) -> Iterator[CheckContext]:
    """Make ``context`` current for the block (the plugin wraps a test's setup and call)."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)
