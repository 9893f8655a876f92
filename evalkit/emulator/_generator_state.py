"""The emulated persona generator's state: its settings, the seeded noise source, its counters.

One :class:`GeneratorState` lives on each emulator; the generator's routes (:mod:`._generator`)
read and change it (apart from them, so the emulator object holds it without an import cycle).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["GeneratorSettings", "GeneratorState"]


@dataclass(frozen=True, slots=True)
class GeneratorSettings:
    """``malformed_rate``: the share of answers that are prose, not JSON (drawn per call, so
    an answer asked again may come back whole); ``flaw_rate``: the share of personas that
    carry one of the generator's mistakes (drawn from the request's content, so the same
    request gets the same personas); ``seed``: the draws (None: the emulator's seed)."""

    malformed_rate: float = 0.0
    flaw_rate: float = 0.0
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "malformedRate": self.malformed_rate,
            "flawRate": self.flaw_rate,
            "seed": self.seed,
        }


class GeneratorState:
    """The generator's settings, its noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        self.default_seed = seed
        self._lock = threading.Lock()
        self.settings = GeneratorSettings()
        self._rng = random.Random(seed)
        self.calls = 0
        self.malformed = 0
        self.personas = 0

    @property
    def seed(self) -> int:
        return self.settings.seed if self.settings.seed is not None else self.default_seed

    def configure(self, settings: GeneratorSettings) -> None:
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

    def count(self, personas: int) -> None:
        with self._lock:
            self.personas += personas

    def stats(self) -> dict[str, int]:
        return {
            "generatorCalls": self.calls,
            "generatorMalformed": self.malformed,
            "generatorPersonas": self.personas,
        }
