"""Progress of a long run, shown the way the place it runs in can show it.

- a terminal (stderr is a TTY): a live tqdm bar with counts by status;
- a notebook open in Jupyter (a kernel started by jupyter_server, which sets
  ``JPY_SESSION_NAME``, or VS Code): the ipywidgets bar, ending at 100% when every conversation
  is recorded (a text bar when ipywidgets is missing, so tqdm never warns);
- anything else (papermill, whose kernels have no live front end, CI logs, a pipe): a few
  summary lines on stderr (start, about every 10%, end), never a bar frozen at 0%.

``EVALKIT_PROGRESS`` (``bar``, ``widget``, ``lines`` or ``off``) overrides the choice.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, TextIO

__all__ = ["Progress", "progress_label", "progress_mode"]

Mode = Literal["bar", "widget", "lines", "off"]
_MODES = ("bar", "widget", "lines", "off")


def progress_mode(enabled: bool | None, stream: TextIO | None = None) -> Mode:
    """How to show progress: ``enabled=False`` shows nothing; otherwise a bar in a terminal,
    a widget in a notebook (with ipywidgets), summary lines elsewhere."""
    if enabled is False:
        return "off"
    forced = os.environ.get("EVALKIT_PROGRESS", "").strip().lower()
    if forced in _MODES:
        return forced  # type: ignore[return-value]
    stream = stream or sys.stderr
    if _in_notebook():
        if not _has_live_frontend():
            return "lines"
        return "widget" if _has_ipywidgets() else "bar"
    isatty: Callable[[], bool] | None = getattr(stream, "isatty", None)
    return "bar" if isatty is not None and isatty() else "lines"


def progress_label(target: str, run_id: str) -> str:
    """What a progress line is about: ``"prod run-7"``, or ``"prod"`` alone when the run is
    named after its target (never ``"prod prod"``), or the run id when it starts with the
    target's label."""
    if run_id == target or run_id.startswith(f"{target}-") or not target:
        return run_id
    return f"{target} {run_id}" if run_id else target


class Progress:
    """Counts outcomes and shows them as :func:`progress_mode` says.

    ``total`` conversations in the grid, ``initial`` already recorded; :meth:`update` counts
    one more with its status. ``stream`` (default stderr) receives bar or lines.
    """

    def __init__(
        self,
        total: int,
        initial: int,
        description: str,
        enabled: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.counts: Counter[str] = Counter()
        self.total = total
        self.done = initial
        self._description = description
        self._stream = stream or sys.stderr
        self.mode = progress_mode(enabled, self._stream)
        self._bar: Any = None
        self._next_line = 0
        self._started = time.monotonic()
        if self.mode == "widget":
            from tqdm.notebook import tqdm as notebook_tqdm

            self._bar = notebook_tqdm(total=total, initial=initial, desc=description, unit="conv")
        elif self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                initial=initial,
                desc=description,
                unit="conv",
                mininterval=0.5,
                dynamic_ncols=True,
                file=self._stream,
            )
        elif self.mode == "lines":
            self._line(f"{initial} of {total} recorded, {total - initial} to run")
            self._advance_mark()

    def update(self, status: str) -> None:
        """Count one finished conversation."""
        self.counts[status] += 1
        self.done += 1
        if self._bar is not None:
            self._bar.set_postfix(dict(sorted(self.counts.items())), refresh=False)
            self._bar.update(1)
        elif self.mode == "lines" and self.done >= self._next_line and self.done < self.total:
            self._line(self._summary())
            self._advance_mark()

    def _advance_mark(self) -> None:
        step = max(1, -(-self.total // 10))  # ceil: start, about 10 lines, end
        self._next_line = (self.done // step + 1) * step

    def _summary(self) -> str:
        percent = 100 * self.done // self.total if self.total else 100
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items()))
        return f"{self.done} of {self.total} ({percent}%)" + (f": {counts}" if counts else "")

    def _line(self, text: str) -> None:
        self._stream.write(f"{self._description}: {text}\n")
        self._stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            if exc_type is None:
                self._bar.refresh()
            self._bar.close()
        elif self.mode == "lines":
            seconds = time.monotonic() - self._started
            ended = "stopped" if exc_type is not None else "finished"
            self._line(f"{ended} after {seconds:.1f}s, {self._summary()}")


def _in_notebook() -> bool:
    if "IPython" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _has_live_frontend() -> bool:
    return any(name in os.environ for name in ("JPY_SESSION_NAME", "VSCODE_PID"))


def _has_ipywidgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True
