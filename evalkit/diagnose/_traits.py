"""Persona traits a simulated caller must show: declared by a persona's tags (or label), shown
by the caller's own words (English, Roman Urdu or Urdu script) or by how the call ended.

One row per trait. A persona that declares ``busy`` and whose caller never says it is busy
in a conversation was not simulated as declared: that conversation says nothing about how the
assistant handles a busy caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["TRAIT_RULES", "CallFacts", "TraitRule", "arabic_share", "declared"]

_ARABIC_RE: Final = re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN_RE: Final = re.compile(r"[A-Za-z]")


def arabic_share(text: str) -> float:
    """Arabic-script letters over all letters (0 when there are none)."""
    arabic = len(_ARABIC_RE.findall(text))
    latin = len(_LATIN_RE.findall(text))
    return arabic / (arabic + latin) if arabic + latin else 0.0


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What a trait's evidence may read: the caller's turns and who spoke last."""

    caller: tuple[str, ...]
    ended_by: str | None


@dataclass(frozen=True, slots=True)
class TraitRule:
    """``tags``: persona tags (or labels) that declare the trait; ``shown``: whether a call
    shows it; ``expect``: what the caller should have done, in words."""

    trait: str
    tags: frozenset[str]
    expect: str
    shown: Callable[[CallFacts], bool]


def _words(*patterns: str) -> Callable[[CallFacts], bool]:
    regex = re.compile("|".join(patterns), re.IGNORECASE)
    return lambda facts: any(regex.search(text) for text in facts.caller)


def _any(*tests: Callable[[CallFacts], bool]) -> Callable[[CallFacts], bool]:
    return lambda facts: any(test(facts) for test in tests)


def _mostly(script: str, share: float) -> Callable[[CallFacts], bool]:
    def shown(facts: CallFacts) -> bool:
        text = " ".join(facts.caller)
        value = arabic_share(text) if script == "arabic" else 1.0 - arabic_share(text)
        return bool(_LATIN_RE.search(text) or _ARABIC_RE.search(text)) and value >= share

    return shown


def _short_answers(facts: CallFacts) -> bool:
    return any(len(text.split()) <= 3 for text in facts.caller)


def _hung_up(facts: CallFacts) -> bool:
    return facts.ended_by == "caller"


_BUSY: Final = _words(
    r"\bbusy\b",
    r"\bdriving\b",
    r"\bmeeting\b",
    r"\bno time\b",
    r"can'?t talk",
    r"got to go",
    r"have to go",
    r"not now",
    r"waqt nahi",
    r"baad mein",
    r"\bjaldi\b",
    r"masroof",
    r"abhi nahi",
    r"مصروف",
    r"وقت نہیں",
    r"بعد میں",
    r"جلدی",
    r"ابھی نہیں",
)
_OBJECTS: Final = _words(
    r"not interested",
    r"stop calling",
    r"keep calling",
    r"who gave you",
    r"don'?t have time",
    r"\benough\b",
    r"don'?t (?:ever )?call",
    r"dilchaspi nahi",
    r"baar baar",
    r"bakwas",
    r"kitni dafa",
    r"call mat",
    r"kisne diya",
    r"waqt nahi",
    r"interest nahi",
    r"!",
    r"دلچسپی نہیں",
    r"بار بار",
    r"بند کریں",
    r"کس نے دیا",
    r"وقت نہیں",
)
_REPEAT: Final = _words(
    r"\brepeat\b",
    r"say that again",
    r"didn'?t (?:get|follow|catch)",
    r"what (?:was that|did you say)",
    r"slowly",
    r"samajh nahi",
    r"dobara bata",
    r"kya kaha",
    r"aahista",
    r"\bsorry\?",
    r"\bjee\?",
    r"سمجھ نہیں",
    r"دوبارہ بتا",
    r"آہستہ",
    r"کیا کہا",
    r"جی؟",
)
_DNC: Final = _words(
    r"don'?t call",
    r"do.not.call",
    r"remove my number",
    r"off your list",
    r"taken off",
    r"call mat",
    r"call na kar",
    r"list se",
    r"\bremove\b",
    r"کال نہ",
    r"کال مت",
    r"فون مت",
    r"فہرست سے",
)
_WRONG: Final = _words(
    r"wrong number",
    r"don'?t know (?:any|them)",
    r"isn'?t .{0,30}number",
    r"no .{0,30} here",
    r"ghalat number",
    r"ka number nahi",
    r"koi .{0,30} nahi",
    r"غلط نمبر",
    r"کا نمبر نہیں",
)
_CALLBACK: Final = _words(
    r"call (?:me )?(?:back|later)",
    r"call me\b",
    r"another (?:time|day)",
    r"\blater\b",
    r"\binstead\b",
    r"reschedul",
    r"baad mein",
    r"dobara call",
    r"baat kar sakte",
    r"بعد میں",
    r"دوبارہ کال",
    r"بات کر سکتے",
)
_PRICE: Final = _words(
    r"\bcost\b",
    r"discount",
    r"\bprice\b",
    r"how much",
    r"kitna",
    r"kharcha",
    r"\bkam\b",
    r"رعایت",
    r"خرچہ",
    r"کتنا",
)
_NOISE: Final = _words(
    r"nois",
    r"\bloud\b",
    r"\bkids\b",
    r"\bshor\b",
    r"one sec",
    r"ek minute",
    r"شور",
    r"ایک منٹ",
    r"what did you say",
    r"kya kaha",
)
_COMPLAINT: Final = _words(
    r"\border\b",
    r"complain",
    r"\blate\b",
    r"wrong item",
    r"refund",
    r"frustrat",
    r"shikayat",
    r"آرڈر",
    r"شکایت",
    r"لیٹ",
)

TRAIT_RULES: Final[tuple[TraitRule, ...]] = (
    TraitRule("busy", frozenset({"busy"}), "says it is busy or has no time", _BUSY),
    TraitRule("hangs up", frozenset({"hangs-up"}), "ends the call itself", _hung_up),
    TraitRule(
        "hostile",
        frozenset({"hostile", "angry"}),
        "objects to the call or complains",
        _any(_OBJECTS, _COMPLAINT),
    ),
    TraitRule(
        "suspicious",
        frozenset({"suspicious", "scam"}),
        "objects, or asks who is calling",
        _any(_OBJECTS, _words(r"\bwho\b", r"\bkaun\b", r"کون", r"silsile", r"سلسلے")),
    ),
    TraitRule("confused", frozenset({"confused", "repeat"}), "asks the agent to repeat", _REPEAT),
    TraitRule("do not call", frozenset({"do-not-call"}), "asks not to be called again", _DNC),
    TraitRule(
        "wrong person",
        frozenset({"wrong-person", "wrong-number"}),
        "says the agent has the wrong person",
        _WRONG,
    ),
    TraitRule(
        "callback",
        frozenset({"call-back", "reschedule"}),
        "asks for another time",
        _any(_CALLBACK, _BUSY),
    ),
    TraitRule("price", frozenset({"price", "bargainer"}), "asks about cost or a discount", _PRICE),
    TraitRule(
        "noisy",
        frozenset({"noise", "distracted"}),
        "mentions the noise or asks to repeat",
        _any(_NOISE, _REPEAT),
    ),
    TraitRule("complaint", frozenset({"complaint"}), "states a complaint", _COMPLAINT),
    TraitRule("terse", frozenset({"terse"}), "answers in a few words", _short_answers),
    TraitRule(
        "urdu script",
        frozenset({"urdu-script"}),
        "speaks in Urdu (Nastaliq) script",
        _mostly("arabic", 0.5),
    ),
    TraitRule("english", frozenset({"english"}), "speaks English", _mostly("latin", 0.8)),
)
"""One row per trait a persona can declare by a tag."""


def declared(tags: Iterable[str]) -> list[TraitRule]:
    """The rules whose tags a persona declares."""
    wanted = {t.strip().casefold() for t in tags}
    return [rule for rule in TRAIT_RULES if rule.tags & wanted]
