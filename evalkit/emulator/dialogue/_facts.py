"""The contact record: which values the agent states, their kinds, and how they read."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._data import load
from ._text import TOKEN_RE, lookup_variable, transliterate
from ._types import Register

__all__ = ["Fact", "kind_of", "record_facts", "referenced_facts"]

_KIND_WORDS: Final[tuple[tuple[str, frozenset[str]], ...]] = (
    ("agent", frozenset({"agent", "caller", "representative", "rep"})),
    (
        "org",
        frozenset(
            {
                "company",
                "clinic",
                "business",
                "org",
                "organization",
                "organisation",
                "brand",
                "bank",
                "hospital",
                "store",
                "shop",
                "firm",
                "school",
            }
        ),
    ),
    ("doctor", frozenset({"doctor", "dr", "physician"})),
    ("date", frozenset({"date", "day", "deadline", "eta", "arrival"})),
    ("time", frozenset({"time", "slot", "hour"})),
    (
        "amount",
        frozenset(
            {"amount", "due", "balance", "fee", "price", "bill", "total", "cost", "installment"}
        ),
    ),
    ("order", frozenset({"order", "tracking", "parcel", "shipment"})),
    ("location", frozenset({"address", "location", "branch", "city", "venue"})),
    ("name", frozenset({"name"})),
)
_GENERIC_KEY_WORDS: Final = frozenset({"customer", "name", "the", "of", "id", "no", "number"})


def _key_words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", key)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


_PERSON_KEYS: Final = frozenset({"customer", "patient", "client", "contact", "recipient"})


def kind_of(key: str) -> str:
    words = set(_key_words(key))
    if words and words <= _PERSON_KEYS:
        return "name"
    for kind, vocabulary in _KIND_WORDS:
        if words & vocabulary:
            return kind
    return "other"


@dataclass(frozen=True, slots=True)
class Fact:
    """One record value the call refers to (``value`` None: the token is said verbatim)."""

    key: str
    kind: str
    value: str | None  # None: no value, the token is said verbatim
    token: str

    @property
    def resolved(self) -> bool:
        return self.value is not None

    def shown(self, register: Register) -> str:
        if self.value is None:
            return self.token
        return transliterate(self.value) if register == "ur" else self.value

    def label(self, register: Register) -> str:
        words = [w for w in _key_words(self.key) if w not in {"customer"}] or ["detail"]
        if register == "ur":
            return " ".join(load("urdu")["urdu_labels"].get(w) or transliterate(w) for w in words)
        return " ".join(words)


def referenced_facts(
    raw_texts: Sequence[str], substituted: str, variables: Mapping[str, Any] | None
) -> list[Fact]:
    """Record values the instructions refer to, in order: tokens first, then key words."""
    facts: list[Fact] = []
    seen: set[str] = set()
    for raw in raw_texts:
        for match in TOKEN_RE.finditer(raw):
            key = match.group(1)
            if key.casefold() in seen:
                continue
            seen.add(key.casefold())
            value = lookup_variable(variables, key)
            facts.append(Fact(key, kind_of(key), value, match.group(0)))
    lowered = substituted.lower()
    for key in variables or {}:
        if key.casefold() in seen:
            continue
        words = [w for w in _key_words(key) if len(w) >= 3 and w not in _GENERIC_KEY_WORDS]
        kind = kind_of(key)
        hit = any(re.search(r"(?<!\w)" + re.escape(w), lowered) for w in words)
        if kind == "name":
            hit = hit or "name" in lowered
        value = lookup_variable(variables, key)
        if hit and value is not None:
            seen.add(key.casefold())
            facts.append(Fact(key, kind, value, "{{" + key + "}}"))
    return facts


def record_facts(variables: Mapping[str, Any] | None) -> dict[str, Fact]:
    """The record's values by kind (first key of each kind), as the caller knows them."""
    facts: dict[str, Fact] = {}
    for key in variables or {}:
        value = lookup_variable(variables, key)
        kind = kind_of(key)
        if value is not None and kind not in facts:
            facts[kind] = Fact(key, kind, value, "{{" + key + "}}")
    return facts
