"""What has been said already, so that a warning is said once, not once per wave and arm.

A tune makes a clone per arm per wave, and each run of it lints the config it uses: without a
memory the same findings fill a notebook between the progress bars. The memory is an object,
not module state: a client owns one (:attr:`evalkit.Client.said_once`, shared with the
clients made from it), so each client says a thing once and a new client says it again.
"""

from __future__ import annotations

import threading

from ._canonical import canonical_json

__all__ = ["SaidOnce"]


class SaidOnce:
    """Keys of things already said; :meth:`first` is true once per key."""

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._lock = threading.Lock()  # a sync client's twin may run in another thread

    def first(self, *key: object) -> bool:
        """True the first time ``key`` (JSON-able parts) is seen; it is remembered."""
        text = canonical_json(list(key))
        with self._lock:
            if text in self._said:
                return False
            self._said.add(text)
            return True

    def __len__(self) -> int:
        return len(self._said)

    def __repr__(self) -> str:
        return f"SaidOnce({len(self._said)} said)"
