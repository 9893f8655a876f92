"""The emulated judge's state: its noise settings, the seeded noise source and its counters.

One :class:`JudgeState` lives on each :class:`~evalkit.emulator.Emulator`; the judge's routes
(:mod:`._judge`) read and change it. It sits apart from the routes so the emulator object can
hold it without importing them (no import cycle).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["JudgeSettings", "JudgeState"]


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """The judge's noise: flip and malformed-output rates, latency (emulated s), seed."""

    flip_rate: float = 0.0
    malformed_rate: float = 0.0
    latency: float = 0.0
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "flipRate": self.flip_rate,
            "malformedRate": self.malformed_rate,
            "latency": self.latency,
            "seed": self.seed,
        }


class JudgeState:
    """The judge's settings, its seeded noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        self._default_seed = seed
        self._lock = threading.Lock()
        self.settings = JudgeSettings()
        self._rng = random.Random(seed)
        self.calls = 0
        self.malformed = 0

    def configure(self, settings: JudgeSettings) -> None:
        """Replace the settings and restart the noise from their seed."""
        with self._lock:
            self.settings = settings
            seed = settings.seed if settings.seed is not None else self._default_seed
            self._rng = random.Random(seed)

    def draws(self, n: int) -> tuple[bool, list[bool]]:
        """Count a call; whether it is malformed and, per rule, whether its verdict flips."""
        with self._lock:
            self.calls += 1
            malformed = self._rng.random() < self.settings.malformed_rate
            flips = [self._rng.random() < self.settings.flip_rate for _ in range(n)]
            self.malformed += malformed
            return malformed, flips

    def stats(self) -> dict[str, int]:
        return {"judgeCalls": self.calls, "judgeMalformed": self.malformed}
