"""The emulated proposer's rules (data): failing behaviours -> instruction edits.

A failing rule is matched to a behaviour by words in its title or criterion (the first row of
:data:`BEHAVIOURS` whose words it mentions); each behaviour has remedies in :data:`REMEDIES`,
and :data:`GENERIC` applies to any failure. A remedy is ``helpful``, ``neutral`` or
``harmful`` by the dialogue engine's rules (``evalkit/emulator/dialogue``: the prompt features
it reacts to), so a search that keeps whatever its proposer says would often keep a harmful or
a neutral edit, and selection has something to do. Edits are ``append`` (a sentence added),
``drop`` (sentences matching a pattern removed) and ``untoken`` (a ``{{token}}`` written out in
words, which evalkit refuses before any conversation: the records need the token).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["BEHAVIOURS", "GENERIC", "REMEDIES", "Remedy", "apply_remedy", "behaviour_of"]

Kind = Literal["helpful", "neutral", "harmful"]
Op = Literal["append", "drop", "untoken"]


@dataclass(frozen=True, slots=True)
class Remedy:
    """One instruction edit for a behaviour: what it does to the prompt and how it works out."""

    behaviour: str
    kind: Kind
    op: Op
    text: str
    rationale: str


BEHAVIOURS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("script", ("script", "nastaliq", "roman urdu")),
    ("confirmation", ("confirm", "yes or no", "yes-or-no")),
    ("callback", ("reschedul", "another slot", "call back", "callback")),
    ("wrong-person", ("wrong person", "not the customer", "privacy")),
    ("date-time", ("date and time", "appointment time")),
    ("close", ("farewell", "close", "hafiz", "goodbye")),
    ("objection", ("object", "do not call", "apolog")),
)
"""(behaviour, words in a failing rule's title or criterion), first match wins."""

REMEDIES: Final[tuple[Remedy, ...]] = (
    Remedy(
        "script",
        "helpful",
        "append",
        "Always answer in Urdu (Nastaliq) script, never in Roman Urdu.",
        "the agent answered in Roman Urdu; ask for Nastaliq script explicitly",
    ),
    Remedy(
        "script",
        "neutral",
        "append",
        "Use simple, everyday Urdu words that anyone can follow.",
        "the agent's language was hard to follow; ask for simple words",
    ),
    Remedy(
        "confirmation",
        "helpful",
        "append",
        "State the date and time and ask the caller to confirm with a yes or no.",
        "the agent never asked for a yes or no; ask for an explicit confirmation",
    ),
    Remedy(
        "confirmation",
        "neutral",
        "append",
        "Be patient and let the caller finish speaking before you answer.",
        "the caller was cut short before answering; ask the agent to wait",
    ),
    Remedy(
        "callback",
        "helpful",
        "append",
        "If the caller cannot come, offer to call back at another time.",
        "callers who could not come were not offered another time",
    ),
    Remedy(
        "wrong-person",
        "helpful",
        "append",
        "If you reach the wrong person, apologise and end the call without any details.",
        "the agent went on with the wrong person",
    ),
    Remedy(
        "date-time",
        "neutral",
        "append",
        "Speak clearly and not too fast when you give details.",
        "details were hard to catch; ask the agent to slow down",
    ),
    Remedy(
        "close",
        "helpful",
        "append",
        "Always close the call politely with shukriya and Allah hafiz.",
        "calls ended without a farewell",
    ),
    Remedy(
        "objection",
        "helpful",
        "append",
        "If the caller objects or asks not to be called, apologise and end the call.",
        "objections were not handled",
    ),
)

GENERIC: Final[tuple[Remedy, ...]] = (
    Remedy(
        "*",
        "neutral",
        "append",
        "Keep a warm, respectful tone throughout the call.",
        "a warmer tone may help every failing call",
    ),
    Remedy(
        "*",
        "harmful",
        "drop",
        r"shukriya|hafiz|close the call|goodbye",
        "the closing lines make calls long; drop them",
    ),
    Remedy(
        "*",
        "harmful",
        "drop",
        r"objects?|apologi[sz]e",
        "the objection lines distract the agent; drop them",
    ),
    Remedy(
        "*",
        "harmful",
        "untoken",
        "customer_name",
        "address the caller without the template name",
    ),
)
"""Remedies for any failure (a tone sentence, dropped lines, a token written out)."""

_SENTENCE_RE: Final = re.compile(r"[^.!?۔]+[.!?۔]?\s*")


def behaviour_of(text: str) -> str | None:
    """The behaviour a failing rule's title and criterion describe, or None."""
    low = text.lower()
    return next((name for name, words in BEHAVIOURS if any(w in low for w in words)), None)


def apply_remedy(instructions: str, remedy: Remedy) -> str:
    """``instructions`` with ``remedy``'s edit (unchanged when it does not apply)."""
    if remedy.op == "append":
        if remedy.text.lower() in instructions.lower():
            return instructions
        return f"{instructions.rstrip()} {remedy.text}".strip()
    if remedy.op == "drop":
        pattern = re.compile(remedy.text, re.IGNORECASE)
        kept = [s for s in _SENTENCE_RE.findall(instructions) if not pattern.search(s)]
        return "".join(kept).strip()
    return instructions.replace("{{" + remedy.text + "}}", "the caller")
