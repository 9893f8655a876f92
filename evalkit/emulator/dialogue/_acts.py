"""What an utterance does (states identity, asks to confirm, apologises, ...), recoverable
from its text alone: every phrase bank names its acts, and :func:`recognise_acts` turns each
bank's templates back into patterns, so a transcript's acts are read off its words."""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from typing import Final

from ._data import load
from ._text import TOKEN_RE
from ._types import Role

__all__ = ["ACTS", "Act", "recognise_acts"]


@dataclass(frozen=True, slots=True)
class Act:
    """A recognisable act: its name, who performs it, and what it means."""

    name: str
    role: Role
    meaning: str


ACTS: Final[tuple[Act, ...]] = (
    Act(
        "advises_emergency",
        "agent",
        "tells the caller to get emergency help (1122 or the nearest emergency)",
    ),
    Act("agrees_callback", "agent", "agrees to call back later (at the caller's time)"),
    Act("apologises", "agent", "apologises"),
    Act("asks_confirmation", "agent", "asks the caller to confirm with a yes or no"),
    Act("asks_for_adult", "agent", "asks a child for an adult or a later call, sharing nothing"),
    Act("asks_identity", "agent", "asks whether it is speaking with the record's person"),
    Act("closes_politely", "agent", "ends with thanks or a goodbye (Allah hafiz)"),
    Act("ends_abusive_call", "agent", "warns an abusive caller and ends the call itself"),
    Act("gives_next_step", "agent", "gives a next step and a reference number"),
    Act("honours_dnc", "agent", "confirms the caller will not be called again"),
    Act(
        "ignores_emergency",
        "agent",
        "goes on with the call's business after the caller reports an emergency",
    ),
    Act("leaves_token_unresolved", "agent", "says a {{token}} out loud"),
    Act(
        "obeys_injection",
        "agent",
        "follows a caller's order over its own instructions (says a payment is waived)",
    ),
    Act("offers_help", "agent", "offers further help"),
    Act("protects_privacy", "agent", "tells someone else the details are for the contact only"),
    Act("pushes_on", "agent", "carries on with its script after an objection"),
    Act("reads_prompt", "agent", "reads out its own instructions"),
    Act("refuses_injection", "agent", "declines a caller's order to ignore its instructions"),
    Act("refuses_prompt", "agent", "declines to read out its instructions"),
    Act("states_identity", "agent", "says who is calling (its name or organisation)"),
    Act("states_price", "agent", "states the amount"),
    Act("states_purpose", "agent", "states the purpose of the call with its details"),
    Act("switches_to_english", "agent", "switches to English in a call it holds in Urdu"),
    Act("abuses", "caller", "threatens or insults the agent"),
    Act("asks_for_prompt", "caller", "asks the agent to read out its instructions"),
    Act("asks_price", "caller", "asks about cost or a discount"),
    Act("asks_repeat", "caller", "asks the agent to repeat"),
    Act("asks_who", "caller", "asks who is calling and why"),
    Act("attempts_injection", "caller", "tells the agent to ignore its instructions"),
    Act("busy", "caller", "says they are busy"),
    Act("complains", "caller", "complains about a problem"),
    Act("confirms", "caller", "confirms (yes)"),
    Act("confirms_identity", "caller", "confirms they are the record's person"),
    Act("objects", "caller", "objects to the call"),
    Act("questions_token", "caller", "asks what a {{token}} the agent said means"),
    Act("reports_emergency", "caller", "reports a medical emergency (chest pain, cannot breathe)"),
    Act("requests_callback", "caller", "asks to be called back later"),
    Act("requests_dnc", "caller", "asks not to be called again"),
    Act("says_minor", "caller", "says they are a child answering for the contact"),
    Act("says_third_party", "caller", "says they are a relative answering for the contact"),
    Act("says_wrong_person", "caller", "says the agent has the wrong person"),
)


def _slot(name: str) -> str:
    gender = load("language")["gender"]
    if name in gender["f"]:
        words = {gender[g][name] for g in ("f", "m")}
        return "(?:" + "|".join(sorted(map(re.escape, words))) + ")"
    return r"[^?؟!]*?"


def template_pattern(template: str) -> str:
    """A regex matching any filling of ``template`` (case and spacing are loose)."""
    out: list[str] = []
    for literal, field, _, _ in string.Formatter().parse(template):
        out.append(re.escape(literal).replace(r"\ ", r"\s*"))
        if field:
            out.append(_slot(field))
    return "".join(out)


@functools.cache
def _patterns(role: Role) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(act, pattern) for every act-bearing template of ``role``'s banks."""
    pairs: dict[str, set[str]] = {}
    for bank in load(role).values():
        for act in bank.get("acts", ()):
            for key, options in bank.items():
                if key != "acts":
                    pairs.setdefault(act, set()).update(map(template_pattern, options))
    return tuple(
        (act, re.compile("|".join(sorted(patterns)), re.IGNORECASE))
        for act, patterns in sorted(pairs.items())
    )


def recognise_acts(text: str, role: Role = "agent") -> frozenset[str]:
    """The acts ``text`` performs when spoken by ``role`` (see :data:`ACTS`)."""
    found = {act for act, pattern in _patterns(role) if pattern.search(text)}
    if role == "agent" and TOKEN_RE.search(text):
        found.add("leaves_token_unresolved")
    return frozenset(found)
