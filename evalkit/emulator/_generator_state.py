"""The emulated persona generator's state: its settings, the seeded noise source, its counters.

One :class:`GeneratorState` lives on each emulator; the generator's routes (:mod:`._generator`)
read and change it (apart from them, so the emulator object holds it without an import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._model_state import ModelState

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


class GeneratorState(ModelState[GeneratorSettings]):
    """The generator's settings, its noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed, GeneratorSettings())
        self.personas = 0

    def count(self, personas: int) -> None:
        with self._lock:
            self.personas += personas

    def stats(self) -> dict[str, int]:
        return {
            "generatorCalls": self.calls,
            "generatorMalformed": self.malformed,
            "generatorPersonas": self.personas,
        }
