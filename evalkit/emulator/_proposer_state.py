"""The emulated proposer's state: its settings, the seeded noise source and its counters.

One :class:`ProposerState` lives on each emulator; the proposer's routes (:mod:`._proposer`)
read and change it (apart from them, so the emulator object holds it without an import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._model_state import ModelState

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


class ProposerState(ModelState[ProposerSettings]):
    """The proposer's settings, its noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed, ProposerSettings())

    def stats(self) -> dict[str, int]:
        return {"proposerCalls": self.calls, "proposerMalformed": self.malformed}
