"""A progress bar for long runs (tqdm.auto: a widget in Jupyter, text in a terminal)."""

from __future__ import annotations

import sys
from collections import Counter
from types import TracebackType
from typing import Any


class Progress:
    """Counts outcomes and shows them on a tqdm bar when enabled.

    ``enabled=None`` shows the bar in a terminal or a notebook, not in CI logs (no TTY), where
    tqdm would print a line per update; there it refreshes at most every 10 s.
    """

    def __init__(
        self, total: int, initial: int, description: str, enabled: bool | None = None
    ) -> None:
        self.counts: Counter[str] = Counter()
        self._bar: Any = None
        if enabled is None:
            enabled = sys.stderr.isatty() or _in_notebook()
        if enabled:
            from tqdm.auto import tqdm

            interactive = sys.stderr.isatty() or _in_notebook()
            self._bar = tqdm(
                total=total,
                initial=initial,
                desc=description,
                unit="conv",
                mininterval=0.5 if interactive else 10.0,
                dynamic_ncols=True,
            )

    def update(self, status: str) -> None:
        """Count one finished conversation."""
        self.counts[status] += 1
        if self._bar is not None:
            self._bar.set_postfix(dict(sorted(self.counts.items())), refresh=False)
            self._bar.update(1)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.close()


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
