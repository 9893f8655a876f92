"""Rendered pages kept for the next request: least recently used out first, within a cap on
bytes and on entries. A page's key carries a stamp of what it read (see :meth:`Site.stamp`),
so a new run, a new label or new grades make a new key and the old page is never served."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

__all__ = ["PageCache"]


class PageCache:
    """Page bodies by key, at most ``max_bytes`` in all and ``max_entries`` pages (a page
    larger than ``max_bytes`` is not kept); thread-safe."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        if max_bytes < 0 or max_entries < 0:
            raise ValueError(
                f"the page cache's caps must not be negative, got {max_bytes}, {max_entries}"
            )
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._pages: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """What the kept pages hold, in bytes."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._pages)

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            body = self._pages.get(key)
            if body is not None:
                self._pages.move_to_end(key)
            return body

    def put(self, key: Hashable, body: bytes) -> None:
        if len(body) > self.max_bytes or not self.max_entries:
            return
        with self._lock:
            old = self._pages.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._pages[key] = body
            self._bytes += len(body)
            while self._bytes > self.max_bytes or len(self._pages) > self.max_entries:
                _, dropped = self._pages.popitem(last=False)
                self._bytes -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
            self._bytes = 0
