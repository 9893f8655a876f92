"""Which trait combinations to ask the generator for, seeded.

``coverage`` (the default): each new combination is, among a few dozen random ones not tried
yet, the one that covers the most value pairs of two axes no persona has covered yet: the
greedy construction of pairwise covering designs (Cohen, Dalal, Fredman and Patton 1997, the
AETG system), because failures in practice come from one trait or from two together (Kuhn,
Wallace and Gallo 2004). ``random``: combinations drawn uniformly among those not tried.

From the second round on, a share ``exploit`` of a round's combinations are neighbours of
personas that made a rule fail in screening: the same traits with one axis drawn again, so
the search learns which of the traits matters and keeps failing callers coming.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from ._axes import Pair, Traits, TraitSpace, pairs_of

__all__ = ["Strategy", "TraitSampler"]

Strategy = Literal["coverage", "random"]
_CANDIDATES: Final = 48
_TRIES: Final = 200


def _key(traits: Traits) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(traits.items()))


class TraitSampler:
    """Draws combinations of ``space`` (module docstring); remembers what it handed out."""

    def __init__(self, space: TraitSpace, seed: int, strategy: Strategy = "coverage") -> None:
        self.space = space
        self.strategy = strategy
        self.seed = seed
        self.rng = random.Random(seed)
        self.tried: set[tuple[tuple[str, str], ...]] = set()
        self.covered: set[Pair] = set()

    def note(self, traits: Traits) -> None:
        """Count ``traits`` as tried (a resumed search replays its rounds through this)."""
        self.tried.add(_key(traits))
        self.covered |= pairs_of(traits, self.space.names)

    def _random(self) -> dict[str, str]:
        return {a.name: self.rng.choice(a.value_names) for a in self.space.axes}

    def _fresh(self) -> dict[str, str] | None:
        for _ in range(_TRIES):
            traits = self._random()
            if _key(traits) not in self.tried:
                return traits
        return None  # (nearly) every combination tried

    def _covering(self) -> dict[str, str] | None:
        best: dict[str, str] | None = None
        gain = -1
        for _ in range(_CANDIDATES):
            traits = self._fresh()
            if traits is None:
                break
            new = len(pairs_of(traits, self.space.names) - self.covered)
            if new > gain:
                best, gain = traits, new
        return best

    def _neighbour(self, parent: Traits) -> dict[str, str] | None:
        axes = [a for a in self.space.axes if len(a.values) > 1]
        for _ in range(_TRIES):
            if not axes:
                return None
            axis = self.rng.choice(axes)
            others = [v for v in axis.value_names if v != parent.get(axis.name)]
            child = {**dict(parent), axis.name: self.rng.choice(others)}
            if _key(child) not in self.tried:
                return child
        return None

    def draw(
        self,
        n: int,
        round_: int = 1,
        failing: Sequence[Mapping[str, str]] = (),
        exploit: float = 0.0,
    ) -> list[dict[str, str]]:
        """``n`` combinations not tried before (fewer when the space runs out): a share
        ``exploit`` of them neighbours of ``failing`` combinations, the rest by the strategy.
        Each round draws from its own seed (the sampler's and ``round_``), so a resumed search
        draws what an uninterrupted one would, given the same rounds before."""
        self.rng = random.Random(self.seed * 1_000_003 + round_)
        out: list[dict[str, str]] = []
        neighbours = round(n * exploit) if failing else 0
        for i in range(n):
            traits: dict[str, str] | None = None
            if i < neighbours:
                traits = self._neighbour(failing[i % len(failing)])
            if traits is None:
                traits = self._covering() if self.strategy == "coverage" else self._fresh()
            if traits is None:
                break
            self.note(traits)
            out.append(traits)
        return out
