"""Progress of a long run, shown the way the place it runs in can show it.

- a terminal (stderr is a TTY): a live tqdm bar with counts by status;
- a notebook open in Jupyter (a kernel started by jupyter_server, which sets
  ``JPY_SESSION_NAME``, or VS Code): the ipywidgets bar, ending at 100% when every conversation
  is recorded (a text bar when ipywidgets is missing, so tqdm never warns);
- anything else (papermill, whose kernels have no live front end, CI logs, a pipe): a few
  summary lines on stderr (start, about every 10%, end), never a bar frozen at 0%.

``EVALKIT_PROGRESS`` (``bar``, ``widget``, ``lines`` or ``off``) overrides the choice.

A bar that ends short of its total ends red in a notebook (tqdm reads it as a failure). Work
that ends early *by plan* ends as finished instead, with a note that says why: a run of the
first waves of a grid (``planned``: where this invocation means to stop), or a run cancelled
with a :func:`planned_stop` message (a sequential look that stopped, its next wave cancelled).
An exception (a failure, a service outage, Ctrl-C) still ends it red.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Literal, TextIO

__all__ = ["PlannedEnd", "Progress", "planned_stop", "progress_label", "progress_mode"]

Mode = Literal["bar", "widget", "lines", "off"]
_MODES = ("bar", "widget", "lines", "off")
_PLANNED: Final = "evalkit planned stop: "


@dataclass(frozen=True, slots=True)
class PlannedEnd:
    """Where a bar is meant to end short of its total (``at`` counted), and why (``note``)."""

    at: int
    note: str


def planned_stop(note: str) -> str:
    """A cancellation message (``task.cancel(planned_stop("stopped early at look 2"))``)
    saying the cancelled work was stopped by plan: its bar ends as finished, with ``note``."""
    return _PLANNED + note


def _planned_note(exc: BaseException | None) -> str | None:
    """The note of a :func:`planned_stop` cancellation, or None for any other exception."""
    if not isinstance(exc, asyncio.CancelledError) or not exc.args:
        return None
    message = exc.args[0]
    if isinstance(message, str) and message.startswith(_PLANNED):
        return message.removeprefix(_PLANNED)
    return None


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
    one more with its status. ``stream`` (default stderr) receives bar or lines. ``planned``:
    this invocation means to stop short of ``total`` (the first waves of a grid); reaching it
    ends the bar as finished, with its note.
    """

    def __init__(
        self,
        total: int,
        initial: int,
        description: str,
        enabled: bool | None = None,
        stream: TextIO | None = None,
        planned: PlannedEnd | None = None,
    ) -> None:
        self.counts: Counter[str] = Counter()
        self.planned = planned
        self.ended: Literal["finished", "stopped", ""] = ""
        self.note = ""  # why a finished bar ended short of its total
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

    @property
    def widget(self) -> Any:
        """The notebook widget (tqdm.notebook's container: text, bar, text), or None."""
        return getattr(self._bar, "container", None) if self.mode == "widget" else None

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
        failed = exc is not None and _planned_note(exc) is None
        note = None if failed else self._early_note(exc)
        self.ended, self.note = ("stopped" if failed else "finished"), note or ""
        if self._bar is not None:
            if note is not None:
                self._bar.set_description(f"{self._description} ({self.note})", refresh=False)
            if not failed:
                self._bar.refresh()
            self._bar.close()
            if note is not None and self.mode == "widget":
                _widget_finished(self._bar)
        elif self.mode == "lines":
            seconds = time.monotonic() - self._started
            said = f"finished ({note})" if note is not None else self.ended
            self._line(f"{said} after {seconds:.1f}s, {self._summary()}")

    def _early_note(self, exc: BaseException | None) -> str | None:
        """Why the work ended short of ``total`` by plan (``"stopped early at look 2: 36 of
        54"``), or None: it reached the total, or it stopped short of its plan."""
        why = _planned_note(exc)
        if why is None and self.planned is not None and self.done >= self.planned.at:
            why = self.planned.note
        if why is None or self.done >= self.total:
            return None
        return f"{why}: {self.done} of {self.total}"


def _widget_finished(bar: Any) -> None:
    """Style a closed notebook bar as finished: tqdm.notebook reads ``n < total`` at close as
    a failure and paints it red (``bar_style='danger'``), which a planned stop is not."""
    container = getattr(bar, "container", None)
    for child in getattr(container, "children", ()):
        if hasattr(child, "bar_style"):
            child.bar_style = "success"


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
