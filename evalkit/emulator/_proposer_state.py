"""The emulated proposer's state: its settings, the seeded noise source and its counters.

One :class:`ProposerState` lives on each emulator; the proposer's routes (:mod:`._proposer`)
read and change it (apart from them, so the emulator object holds it without an import cycle).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["ProposerSettings", "ProposerState"]


@dataclass(frozen=True, slots=True)
class ProposerSettings:
    """``malformed_rate``: the share of answers that are prose, not JSON; ``noop``: every
    candidate is the current prompt unchanged (a proposer whose edits do nothing);
    ``seed``: which remedies are drawn (None: the emulator's seed)."""

    malformed_rate: float = 0.0
    noop: bool = False
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"malformedRate": self.malformed_rate, "noop": self.noop, "seed": self.seed}


class ProposerState:
    """The proposer's settings, its noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        self.default_seed = seed
        self._lock = threading.Lock()
        self.settings = ProposerSettings()
        self._rng = random.Random(seed)
        self.calls = 0
        self.malformed = 0

    @property
    def seed(self) -> int:
        return self.settings.seed if self.settings.seed is not None else self.default_seed

    def configure(self, settings: ProposerSettings) -> None:
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

    def stats(self) -> dict[str, int]:
        return {"proposerCalls": self.calls, "proposerMalformed": self.malformed}
