"""Planted weaknesses: the agent behaviours that give way for certain callers (rules as data).

Each row of :data:`WEAKNESSES` names the persona traits (the trait table's names, all of them
required) for which the agent stops doing what its prompt asks: a prompt feature (the feature
table's names, or ``script``: the agent slips from Nastaliq into Roman Urdu) is carried out
with probability ``1 - strength`` of what it would be otherwise. A model really does this:
an instruction it follows for most callers is lost with some, and only callers of that kind
show it.

They are off unless the emulator is started with ``planted_weaknesses`` (``EmulatorSettings``,
``evalkit emulator --planted-weaknesses``), so every other transcript stays as it was; a
search for the callers that break a draft is measured against them (it is never told them:
the persona generator writes behaviour from traits alone). A draw is made only in a call whose
persona has every trait of a row, so the other calls' draws are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["WEAKNESSES", "Weakness", "active_weaknesses", "weakness_table"]


@dataclass(frozen=True, slots=True)
class Weakness:
    """A planted weakness: for personas with every trait in ``traits``, the agent fails to do
    ``feature`` with probability ``strength``; ``shows`` says how it looks in a call."""

    name: str
    traits: frozenset[str]
    feature: str
    strength: float
    shows: str


WEAKNESSES: Final[tuple[Weakness, ...]] = (
    Weakness(
        "lost-question",
        frozenset({"confused", "distracted"}),
        "confirm",
        0.9,
        "with a caller who is hard of hearing in a noisy place, the agent repeats the details "
        "but never asks for a yes or no",
    ),
    Weakness(
        "slot-insisted",
        frozenset({"callback", "terse"}),
        "callback",
        0.9,
        "a caller who asks for another time in one or two words is told the old slot again",
    ),
    Weakness(
        "script-slips",
        frozenset({"code_switch", "price"}),
        "script",
        0.9,
        "a code-switching caller who asks about the cost pulls the agent into Roman Urdu",
    ),
    Weakness(
        "pushes-on-elderly",
        frozenset({"hostile", "confused"}),
        "objections",
        0.9,
        "an irritated elderly caller's objection is talked over, and the call ends without a "
        "farewell",
    ),
    Weakness(
        "no-farewell-on-price",
        frozenset({"price"}),
        "close",
        0.6,
        "a caller who asks about the cost is not given a farewell",
    ),
)
"""Every planted weakness, one row each."""


def active_weaknesses(
    weaknesses: Iterable[Weakness], traits: frozenset[str]
) -> Mapping[str, float]:
    """feature -> strength for the rows whose traits a persona has all of (the strongest row
    when two give way on one feature)."""
    out: dict[str, float] = {}
    for row in weaknesses:
        if row.traits <= traits:
            out[row.feature] = max(out.get(row.feature, 0.0), row.strength)
    return out


def weakness_table() -> list[tuple[str, str, str, str, str]]:
    """Rows for docs: name, traits, feature, strength, what it shows."""
    return [
        (w.name, ", ".join(sorted(w.traits)), w.feature, f"{w.strength:.0%}", w.shows)
        for w in WEAKNESSES
    ]
