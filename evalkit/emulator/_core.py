"""The emulator object: settings, state, dialogue backend, faults, counters, open streams."""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..api import API_KEY_PREFIX
from ._errors import LastResort
from ._faults import Faults
from ._judge_state import JudgeState
from ._persistence import DocumentStore, MemoryStore, SqliteStore
from ._proposer_state import ProposerState
from ._settings import EmulatorSettings
from ._state import State

if TYPE_CHECKING:
    from .dialogue import DialogueBackend

logger = logging.getLogger("evalkit.emulator")


@dataclass(slots=True)
class SimulationStats:
    """Simulate streams: started, completed (a terminal event sent), cancelled (the client
    went away or the server shut down), active; `errored` and `dropped` break them down."""

    started: int = 0
    completed: int = 0
    cancelled: int = 0
    active: int = 0
    errored: int = 0
    dropped: int = 0

    def to_json(self) -> dict[str, int]:
        return asdict(self)


class RateLimiter:
    """A sliding-window request cap per key (synthesis requests per project)."""

    def __init__(self, limit: int | None, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str) -> float | None:
        """Count a request; None when allowed, else seconds until a slot frees."""
        if self.limit is None:
            return None
        now = time.monotonic()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - self.window_s:
                hits.popleft()
            if len(hits) >= self.limit:
                return max(hits[0] + self.window_s - now, 0.0)
            hits.append(now)
            return None


class Emulator:
    """One emulated service: everything the routes need, independent of the HTTP server."""

    def __init__(
        self,
        settings: EmulatorSettings | None = None,
        *,
        api_key: str | None = None,
        db: str | Path | None = None,
        backend: DialogueBackend | None = None,
    ) -> None:
        self.settings = settings or EmulatorSettings()
        if api_key is not None and (
            not isinstance(api_key, str) or not api_key.startswith(API_KEY_PREFIX)
        ):
            raise ValueError(f"api_key must start with {API_KEY_PREFIX!r}")
        store: DocumentStore = SqliteStore(db) if db is not None else MemoryStore()
        self.state = State(store)
        self.api_key = self.state.bootstrap(api_key)
        self.seed = self.settings.seed if self.settings.seed is not None else secrets.randbits(63)
        if backend is None:
            from .dialogue import ScriptedBackend

            backend = ScriptedBackend()
        self.backend: DialogueBackend = backend
        self.faults = Faults(self.seed)
        self.judge: JudgeState = JudgeState(self.seed)
        self.proposer: ProposerState = ProposerState(self.seed)
        self.stats = SimulationStats()
        self.last_resort = LastResort()
        self.synthesis_limiter = RateLimiter(
            self.settings.synthesis_requests_per_minute, self.settings.synthesis_window
        )
        self.livekit_api_key, self.livekit_api_secret = self.state.livekit_keys(
            self.settings.livekit_api_key, self.settings.livekit_api_secret
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.streams: set[asyncio.Queue[tuple[str, Any]]] = set()
        self.tasks: set[asyncio.Task[Any]] = set()

    @property
    def default_project_id(self) -> str:
        return str(self.state.meta["defaultProjectId"])

    def close_streams(self) -> None:
        """End every open simulate stream (call on the server's loop)."""
        for queue in list(self.streams):
            queue.put_nowait(("shutdown", None))
        for task in list(self.tasks):
            task.cancel()

    def close(self) -> None:
        """Release the document store."""
        self.state.close()

    def __repr__(self) -> str:
        return f"Emulator(time_scale={self.settings.time_scale}, seed={self.seed})"
