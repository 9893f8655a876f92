"""What the emulated chat models' states share (the proposer's, the persona generator's): the
settings in force, a seeded noise source restarted when they change, and the malformed-answer
draw that counts each call."""

from __future__ import annotations

import random
import threading
from typing import Generic, Protocol, TypeVar

__all__ = ["ModelSettings", "ModelState"]


class ModelSettings(Protocol):
    """Settings with a malformed-answer share and an optional seed."""

    @property
    def malformed_rate(self) -> float: ...
    @property
    def seed(self) -> int | None: ...


S = TypeVar("S", bound=ModelSettings)


class ModelState(Generic[S]):
    """One emulated model's settings, its noise source and its call counters."""

    def __init__(self, seed: int, settings: S) -> None:
        self.default_seed = seed
        self._lock = threading.Lock()
        self.settings = settings
        self._rng = random.Random(seed)
        self.calls = 0
        self.malformed = 0

    @property
    def seed(self) -> int:
        return self.settings.seed if self.settings.seed is not None else self.default_seed

    def configure(self, settings: S) -> None:
        """Replace the settings and restart the noise from their seed."""
        with self._lock:
            self.settings = settings
            self._rng = random.Random(self.seed)

    def draw_malformed(self) -> bool:
        """Count a call; whether its answer is malformed."""
        with self._lock:
            self.calls += 1
            bad = self._rng.random() < self.settings.malformed_rate
            self.malformed += bad
            return bad
