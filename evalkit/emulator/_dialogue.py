"""The emulator's dialogue engine: who says what in a rehearsed call (E9).

:class:`ScriptedBackend` writes both sides of a conversation from phrase banks, deterministically
for a given :class:`ConversationSetup` (``random.Random(setup.seed)`` is the only source of
chance). It reacts to the assistant's config the way the spec says a model does, so prompt edits
change grades in recognisable ways. The app around it times the turns, sends pings, enforces the
five-minute ceiling and handles disconnects; a backend only yields :class:`Utterance` objects.

Agent rules (read from ``config.agent``, after ``{{token}}`` substitution)

=====================  =========================================================================
speaks first           only when ``initialGreeting`` is true; the opening line is the quoted text
                       of ``greetingInstructions`` when it quotes one (``Say: "..."``), otherwise
                       composed from it (salutation, name, self-introduction, purpose when it asks
                       for one). Otherwise the caller opens ("Hello?" / "جی، ہیلو؟" / "Haan ji?").
language and script    instructions about Urdu (they say "Urdu" or are written in Arabic script)
                       that ask for Nastaliq / Urdu script ("Nastaliq", "Urdu script",
                       "اردو رسم الخط", "نستعلیق") -> Urdu in Arabic script, with record values
                       transliterated; about Urdu without that -> Roman Urdu; else English.
variables              ``{{key}}`` / ``{{ key }}`` take the record's value; a token with no value
                       stays verbatim, so the agent says e.g. "{{due_date}}" out loud. Record
                       values the instructions refer to (by token, or by a word of the key such
                       as "appointment" for ``appointment_date``) are stated in the call.
confirm                "confirm", "yes or no", "verify", "tasdeeq", "تصدیق" -> states the key fact
                       and asks for a yes or no.
objections             "objection", "do not call", "not interested", "angry", "apologise",
                       "maazrat", "معذرت" -> apologises and ends politely when the caller objects,
                       refuses or asks to be removed; without it the agent pushes on.
closing                "goodbye", "thank", "Allah hafiz", "shukriya", "شکریہ" -> polite close.
callbacks              "call back", "reschedule", "baad mein" -> agrees to the caller's time.
vague prompt           fewer than 15 words -> opens vaguely half the time ("about your account")
                       and asks to confirm less often (65% even when told to).
=====================  =========================================================================

Every rule is followed with a seeded "model noise": an instructed behaviour is skipped in about
10% of calls (35% for a vague prompt's confirmation), an uninstructed one appears in 10-35%, and a
Nastaliq agent drifts into Roman Urdu in 8% of calls. So pass rates move, but rarely to 0 or 1.

Persona traits (keywords in ``persona.label`` + ``persona.behavior``, English or Roman Urdu,
whole words, ignored after "not" / "never" / "don't"; several can combine)

==============  ==========================================================  =====================
trait           keywords                                                    caller behaviour
==============  ==========================================================  =====================
wrong_person    wrong number, wrong person, not the customer, ghalat        "Yeh X ka number
                number, galat number, koi aur                               nahi hai"; ends
busy            busy, hurry, rushed, no time, driving, meeting, masroof,    hangs up early; the
                waqt nahi, jaldi                                            call ends on the
                                                                            caller's line
dnc             do not call, dnc, remove my number, stop calling,           asks to be removed
                unsubscribe, opt out, call mat, number hata
hostile         hostile, angry, rude, aggressive, irritated, annoyed,       objects; may demand
                suspicious, gussa, naraz, badtameez                         the calls stop
callback        call back, callback, call later, later time, reschedule,    asks for a later time
                baad mein call, dobara call
confused        confused, elderly, old, senior, hard of hearing, forgetful, "Jee? Dobara
                buzurg, samajh nahi                                         bataiye"
distracted      distracted, noise, noisy, background, traffic, kids,        mentions the noise,
                children, crowd, market, bazaar, shor                       asks to repeat
price           price, cost, expensive, discount, budget, cheap, afford,    asks about cost and
                mehnga, qeemat, paise                                       discount
code_switch     code-switch, code switch, mixes English, Urdu and English,  mixes Urdu and
                English words, Hinglish, Urdish                             English
cooperative     cooperative, friendly, helpful, agrees, polite, willing     confirms
==============  ==========================================================  =====================

The caller answers to the record's name and echoes its values (unless it is the wrong person),
questions tokens the agent left unresolved, and often ends the call itself. With no ``context``
and no ``variables`` it behaves like a genuine cold call ("Kaun? Kis silsile mein?"); a context
saying the person expects the call makes it recognise the purpose.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

__all__ = [
    "ConversationSetup",
    "DialogueBackend",
    "ScriptedBackend",
    "Utterance",
    "detect_register",
    "persona_traits",
    "plan_conversation",
    "substitute_variables",
]

Role = Literal["agent", "caller"]
Register = Literal["en", "ru", "ur"]


@dataclass(frozen=True, slots=True)
class ConversationSetup:
    """Everything a backend needs to play one rehearsed call."""

    config: Mapping[str, Any]
    """The assistant's AssistantConfig JSON (camelCase keys) as saved now."""
    persona: Mapping[str, Any]
    """``{"label", "behavior", "path"}`` as sent; any may be missing."""
    context: str | None
    """What the person picking up knows; None means a genuine cold call."""
    variables: Mapping[str, Any] | None
    """The contact record; both sides see it."""
    seed: int
    """Per-conversation seed (the app derives it)."""


@dataclass(frozen=True, slots=True)
class Utterance:
    """One spoken turn."""

    role: Role
    text: str


class DialogueBackend(Protocol):
    """Plays both sides of a rehearsed call."""

    def conversation(self, setup: ConversationSetup) -> AsyncIterator[Utterance]:
        """Yield the utterances in speaking order; stopping early abandons the call."""
        ...


class ScriptedBackend:
    """Deterministic, offline dialogue from phrase banks (see the module docstring)."""

    def __init__(self, max_turns: int = 16) -> None:
        if max_turns < 2:
            raise ValueError(f"max_turns must be at least 2; got {max_turns}")
        self._max_turns = max_turns

    def __repr__(self) -> str:
        return f"ScriptedBackend(max_turns={self._max_turns})"

    async def conversation(self, setup: ConversationSetup) -> AsyncIterator[Utterance]:
        """Yield the planned conversation for ``setup``."""
        for utterance in plan_conversation(setup, self._max_turns):
            yield utterance


# --------------------------------------------------------------------------------------------
# Variables, language, features


_TOKEN_RE: Final = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
_ARABIC_LETTER_RE: Final = re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN_LETTER_RE: Final = re.compile(r"[A-Za-z]")
_NEGATION_BEFORE_RE: Final = re.compile(
    r"\b(?:not|never|don't|dont|doesn't|isn't|no longer|without|avoid)\s+(?:[\w'-]+\s+){0,4}$",
    re.IGNORECASE,
)
_NEGATION_AFTER_RE: Final = re.compile(r"^\s*(?:mat|nahi|nahin|na|نہ|مت|نہیں)(?!\w)")


def lookup_variable(variables: Mapping[str, Any] | None, key: str) -> str | None:
    """The record's value for ``key`` as text (exact key first, then case-insensitive)."""
    if not variables:
        return None
    value = variables.get(key)
    if value is None:
        folded = key.casefold()
        value = next((v for k, v in variables.items() if k.casefold() == folded), None)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def substitute_variables(text: str, variables: Mapping[str, Any] | None) -> str:
    """Replace ``{{key}}`` and ``{{ key }}`` with the record's values; unknown tokens stay."""

    def one(match: re.Match[str]) -> str:
        value = lookup_variable(variables, match.group(1))
        return match.group(0) if value is None else value

    return _TOKEN_RE.sub(one, text)


def _arabic_share(text: str) -> float:
    arabic = len(_ARABIC_LETTER_RE.findall(text))
    latin = len(_LATIN_LETTER_RE.findall(text))
    return arabic / (arabic + latin) if arabic + latin else 0.0


@functools.lru_cache(maxsize=256)
def _words_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(patterns) + r")(?!\w)", re.IGNORECASE)


def _mentions(text: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``text`` mentions one of the patterns as whole words, not negated around it."""
    for match in _words_regex(patterns).finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        after = text[match.end() : match.end() + 10]
        if not (_NEGATION_BEFORE_RE.search(before) or _NEGATION_AFTER_RE.search(after)):
            return True
    return False


_URDU_WORDS: Final = ("urdu", "اردو", "roman urdu")
_NASTALIQ_WORDS: Final = (
    r"nastaliq",
    r"nastaleeq",
    r"nastaʿlīq",
    r"urdu script",
    r"arabic script",
    r"perso-arabic",
    r"urdu rasm ul khat",
    r"اردو رسم الخط",
    r"رسم الخط",
    r"نستعلیق",
    r"اردو حروف",
)


def detect_register(instructions: str) -> Register:
    """``"ur"`` (Urdu in Arabic script), ``"ru"`` (Roman Urdu) or ``"en"`` for a prompt."""
    about_urdu = _mentions(instructions, _URDU_WORDS) or _arabic_share(instructions) >= 0.3
    if not about_urdu:
        return "en"
    return "ur" if _mentions(instructions, _NASTALIQ_WORDS) else "ru"


_TRAIT_KEYWORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "wrong_person": (
        r"wrong (?:number|person)",
        r"not the (?:customer|account holder|person|right person|patient)",
        r"different person",
        r"gh?alat number",
        r"koi aur",
    ),
    "busy": (
        r"busy",
        r"hurr(?:y|ied)",
        r"rushed",
        r"no time",
        r"driving",
        r"in a meeting",
        r"masroof",
        r"waqt nahi",
        r"jaldi",
    ),
    "dnc": (
        r"do[\s-]not[\s-]call",
        r"dnc",
        r"remove (?:my|his|her|their) number",
        r"stop calling",
        r"unsubscribe",
        r"opt[\s-]out",
        r"call mat",
        r"number hata",
    ),
    "hostile": (
        r"hostile",
        r"angry",
        r"rude",
        r"aggressive",
        r"irritated",
        r"annoyed",
        r"suspicious",
        r"objects?",
        r"gh?ussa",
        r"naraz",
        r"badtameez",
    ),
    "callback": (
        r"call ?back",
        r"call (?:me |them )?later",
        r"later time",
        r"reschedul\w*",
        r"baad mein call",
        r"dobara call",
    ),
    "confused": (
        r"confused",
        r"elderly",
        r"(?<!-)old(?:er)?",
        r"senior citizen",
        r"retired",
        r"hard of hearing",
        r"forgetful",
        r"buzurg",
        r"samajh nahi",
    ),
    "distracted": (
        r"distracted",
        r"noise",
        r"noisy",
        r"traffic",
        r"kids",
        r"children",
        r"crowd",
        r"market",
        r"bazaar",
        r"shor",
    ),
    "price": (
        r"price[sd]?",
        r"cost(?:s|ly)?",
        r"expensive",
        r"discounts?",
        r"budget",
        r"cheap(?:er)?",
        r"afford\w*",
        r"mehnga",
        r"qeemat",
        r"paise",
    ),
    "code_switch": (
        r"code[\s-]?switch",
        r"mix(?:es)? (?:in )?english",
        r"urdu and english",
        r"english and urdu",
        r"english words",
        r"hinglish",
        r"urdish",
    ),
    "cooperative": (
        r"cooperative",
        r"co-operative",
        r"friendly",
        r"helpful",
        r"agrees",
        r"polite",
        r"willing",
        r"happy",
    ),
}


def persona_traits(persona: Mapping[str, Any]) -> frozenset[str]:
    """The behaviour traits a persona's label and behaviour text ask for (module docstring)."""
    text = " ".join(str(persona.get(k) or "") for k in ("label", "behavior"))
    return frozenset(t for t, words in _TRAIT_KEYWORDS.items() if _mentions(text, words))


_FEATURE_KEYWORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "confirm": (
        r"confirm\w*",
        r"yes[\s/-]*or[\s/-]*no",
        r"verif\w*",
        r"tasdeeq",
        r"haan ya nahi",
        r"تصدیق",
        r"ہاں یا نہیں",
        r"کنفرم",
    ),
    "objections": (
        r"objections?",
        r"objects?",
        r"do[\s-]not[\s-]call",
        r"dnc",
        r"not interested",
        r"refus\w*",
        r"angry",
        r"upset",
        r"hostile",
        r"apologi[sz]\w*",
        r"maafi",
        r"maazrat",
        r"معذرت",
        r"معافی",
        r"اعتراض",
        r"ناراض",
    ),
    "close": (
        r"goodbye",
        r"good bye",
        r"bye",
        r"thank\w*",
        r"close the call",
        r"wrap up",
        r"sign off",
        r"khuda hafiz",
        r"allah hafiz",
        r"shukriya",
        r"خدا حافظ",
        r"اللہ حافظ",
        r"شکریہ",
    ),
    "callback": (
        r"call ?back",
        r"reschedul\w*",
        r"later time",
        r"another time",
        r"baad mein",
        r"بعد میں",
        r"دوبارہ کال",
    ),
    "verify": (
        r"verif\w*",
        r"identity",
        r"speaking (?:to|with) the right",
        r"right person",
        r"شناخت",
    ),
}
_PURPOSE_WORDS: Final = (
    r"purpose",
    r"reason",
    r"why you(?:'re| are) calling",
    r"calling about",
    r"mention\w*",
    r"remind\w*",
    r"maqsad",
    r"مقصد",
)

_TOPIC_KEYWORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "appointment": (
        r"appointments?",
        r"clinic",
        r"doctors?",
        r"check-?ups?",
        r"consultation",
        r"mulaqat",
        r"اپائنٹمنٹ",
        r"ملاقات",
        r"کلینک",
    ),
    "payment": (
        r"payments?",
        r"bills?",
        r"dues?",
        r"amount",
        r"installments?",
        r"invoice",
        r"balance",
        r"outstanding",
        r"qist",
        r"ادائیگی",
        r"بل",
        r"قسط",
    ),
    "delivery": (
        r"deliver\w*",
        r"(?<!in )orders?",
        r"parcels?",
        r"shipments?",
        r"courier",
        r"ڈیلیوری",
        r"آرڈر",
    ),
    "renewal": (r"renew\w*", r"subscriptions?", r"expir\w*", r"policy", r"تجدید", r"سبسکرپشن"),
    "survey": (r"survey", r"feedback", r"ratings?", r"satisf\w*", r"رائے", r"سروے"),
}


def _topic(text: str) -> str:
    for topic, words in _TOPIC_KEYWORDS.items():
        if _mentions(text, words):
            return topic
    return "generic"


# --------------------------------------------------------------------------------------------
# The record: which values the agent states, and how they read in each script


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


def _kind(key: str) -> str:
    words = set(_key_words(key))
    if words and words <= _PERSON_KEYS:
        return "name"
    for kind, vocabulary in _KIND_WORDS:
        if words & vocabulary:
            return kind
    return "other"


@dataclass(frozen=True, slots=True)
class _Fact:
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
            return " ".join(_URDU_LABELS.get(w, transliterate(w)) for w in words)
        return " ".join(words)


def _referenced_facts(
    raw_texts: Sequence[str], substituted: str, variables: Mapping[str, Any] | None
) -> list[_Fact]:
    """Record values the instructions refer to, in order: tokens first, then key words."""
    facts: list[_Fact] = []
    seen: set[str] = set()
    for raw in raw_texts:
        for match in _TOKEN_RE.finditer(raw):
            key = match.group(1)
            if key.casefold() in seen:
                continue
            seen.add(key.casefold())
            value = lookup_variable(variables, key)
            facts.append(_Fact(key, _kind(key), value, match.group(0)))
    lowered = substituted.lower()
    for key in variables or {}:
        if key.casefold() in seen:
            continue
        words = [w for w in _key_words(key) if len(w) >= 3 and w not in _GENERIC_KEY_WORDS]
        kind = _kind(key)
        hit = any(re.search(r"(?<!\w)" + re.escape(w), lowered) for w in words)
        if kind == "name":
            hit = hit or "name" in lowered
        value = lookup_variable(variables, key)
        if hit and value is not None:
            seen.add(key.casefold())
            facts.append(_Fact(key, kind, value, "{{" + key + "}}"))
    return facts


def _record_facts(variables: Mapping[str, Any] | None) -> dict[str, _Fact]:
    """The record's values by kind (first key of each kind), as the caller knows them."""
    facts: dict[str, _Fact] = {}
    for key in variables or {}:
        value = lookup_variable(variables, key)
        kind = _kind(key)
        if value is not None and kind not in facts:
            facts[kind] = _Fact(key, kind, value, "{{" + key + "}}")
    return facts


# --------------------------------------------------------------------------------------------
# Roman -> Urdu script for record values (names, months, places) in Nastaliq conversations


_URDU_WORD_MAP: Final[Mapping[str, str]] = {
    # months, days, times of day
    "january": "جنوری",
    "jan": "جنوری",
    "february": "فروری",
    "feb": "فروری",
    "march": "مارچ",
    "mar": "مارچ",
    "april": "اپریل",
    "apr": "اپریل",
    "may": "مئی",
    "june": "جون",
    "jun": "جون",
    "july": "جولائی",
    "jul": "جولائی",
    "august": "اگست",
    "aug": "اگست",
    "september": "ستمبر",
    "sep": "ستمبر",
    "sept": "ستمبر",
    "october": "اکتوبر",
    "oct": "اکتوبر",
    "november": "نومبر",
    "nov": "نومبر",
    "december": "دسمبر",
    "dec": "دسمبر",
    "monday": "پیر",
    "tuesday": "منگل",
    "wednesday": "بدھ",
    "thursday": "جمعرات",
    "friday": "جمعہ",
    "saturday": "ہفتہ",
    "sunday": "اتوار",
    "today": "آج",
    "tomorrow": "کل",
    "am": "بجے صبح",
    "pm": "بجے شام",
    "morning": "صبح",
    "evening": "شام",
    "rs": "روپے",
    "pkr": "روپے",
    "rupees": "روپے",
    # names and titles
    "dr": "ڈاکٹر",
    "doctor": "ڈاکٹر",
    "mr": "مسٹر",
    "mrs": "مسز",
    "ms": "مس",
    "sahib": "صاحب",
    "ayesha": "عائشہ",
    "aisha": "عائشہ",
    "ali": "علی",
    "ahmed": "احمد",
    "ahmad": "احمد",
    "fatima": "فاطمہ",
    "sara": "سارہ",
    "sarah": "سارہ",
    "imran": "عمران",
    "hina": "حنا",
    "bilal": "بلال",
    "usman": "عثمان",
    "zainab": "زینب",
    "hassan": "حسن",
    "hasan": "حسن",
    "maryam": "مریم",
    "omar": "عمر",
    "umar": "عمر",
    "kamran": "کامران",
    "nadia": "نادیہ",
    "farah": "فرح",
    "asad": "اسد",
    "sana": "ثنا",
    "rabia": "رابعہ",
    "hamza": "حمزہ",
    "noor": "نور",
    "saima": "صائمہ",
    "tariq": "طارق",
    "shahid": "شاہد",
    "iqbal": "اقبال",
    "malik": "ملک",
    "khan": "خان",
    "qureshi": "قریشی",
    "siddiqui": "صدیقی",
    "butt": "بٹ",
    "chaudhry": "چوہدری",
    "raza": "رضا",
    "hussain": "حسین",
    "akhtar": "اختر",
    "mahmood": "محمود",
    "shah": "شاہ",
    "zara": "زارا",
    "amna": "آمنہ",
    "mehwish": "مہوش",
    "faisal": "فیصل",
    "nasir": "ناصر",
    "javed": "جاوید",
    "rashid": "راشد",
    "abdul": "عبدل",
    # places and common words in company names
    "karachi": "کراچی",
    "lahore": "لاہور",
    "islamabad": "اسلام آباد",
    "rawalpindi": "راولپنڈی",
    "peshawar": "پشاور",
    "multan": "ملتان",
    "faisalabad": "فیصل آباد",
    "city": "سٹی",
    "clinic": "کلینک",
    "hospital": "ہسپتال",
    "bank": "بینک",
    "medical": "میڈیکل",
    "center": "سینٹر",
    "centre": "سینٹر",
    "care": "کیئر",
    "health": "ہیلتھ",
    "dental": "ڈینٹل",
    "telecom": "ٹیلی کام",
    "electric": "الیکٹرک",
    "insurance": "انشورنس",
    "services": "سروسز",
    "store": "اسٹور",
    "mart": "مارٹ",
    "road": "روڈ",
    "street": "اسٹریٹ",
    "block": "بلاک",
    "phase": "فیز",
    "branch": "برانچ",
    "and": "اینڈ",
}
_URDU_LABELS: Final[Mapping[str, str]] = {
    "policy": "پالیسی",
    "number": "نمبر",
    "order": "آرڈر",
    "account": "اکاؤنٹ",
    "date": "تاریخ",
    "time": "وقت",
    "amount": "رقم",
    "id": "آئی ڈی",
    "plan": "پلان",
    "reference": "ریفرنس",
    "code": "کوڈ",
    "address": "پتہ",
    "city": "شہر",
    "product": "پروڈکٹ",
    "branch": "برانچ",
    "balance": "بیلنس",
    "due": "واجب الادا",
    "appointment": "اپائنٹمنٹ",
    "doctor": "ڈاکٹر",
    "name": "نام",
    "tracking": "ٹریکنگ",
    "invoice": "انوائس",
    "fee": "فیس",
    "detail": "تفصیل",
}
_DIGRAPHS: Final[Mapping[str, str]] = {
    "sh": "ش",
    "ch": "چ",
    "kh": "خ",
    "gh": "غ",
    "th": "تھ",
    "ph": "پھ",
    "bh": "بھ",
    "dh": "دھ",
    "jh": "جھ",
    "aa": "ا",
    "ee": "ی",
    "oo": "و",
    "ai": "ے",
    "ou": "و",
}
_CONSONANTS: Final[Mapping[str, str]] = {
    "b": "ب",
    "c": "ک",
    "d": "د",
    "f": "ف",
    "g": "گ",
    "h": "ہ",
    "j": "ج",
    "k": "ک",
    "l": "ل",
    "m": "م",
    "n": "ن",
    "p": "پ",
    "q": "ق",
    "r": "ر",
    "s": "س",
    "t": "ٹ",
    "v": "و",
    "w": "و",
    "x": "کس",
    "y": "ی",
    "z": "ز",
}
_VOWEL_INITIAL: Final = {"a": "ا", "e": "ای", "i": "ا", "o": "او", "u": "ا"}
_VOWEL_FINAL: Final = {"a": "ا", "e": "ے", "i": "ی", "o": "و", "u": "و"}
_VOWEL_MEDIAL: Final = {"a": "", "e": "ی", "i": "ی", "o": "و", "u": "و"}
_WORD_RE: Final = re.compile(r"\{\{[^{}]*\}\}|[A-Za-z]+|[^A-Za-z{]+|\{")


def _transliterate_word(word: str) -> str:
    lowered = word.lower()
    known = _URDU_WORD_MAP.get(lowered)
    if known is not None:
        return known
    out: list[str] = []
    i = 0
    while i < len(lowered):
        pair = lowered[i : i + 2]
        if pair in _DIGRAPHS and not (i == 0 and pair in {"aa", "ee", "oo", "ai", "ou"}):
            out.append(_DIGRAPHS[pair])
            i += 2
            continue
        c = lowered[i]
        if c in _CONSONANTS:
            out.append(_CONSONANTS[c])
        elif i == 0:
            out.append(_VOWEL_INITIAL.get(c, ""))
        elif i == len(lowered) - 1:
            out.append(_VOWEL_FINAL.get(c, ""))
        else:
            out.append(_VOWEL_MEDIAL.get(c, ""))
        i += 1
    return "".join(out) or word


_CURRENCY_RE: Final = re.compile(r"\b(?:rs\.?|pkr)\s*(\d[\d,.]*)", re.IGNORECASE)
_TEXT_COMMA_RE: Final = re.compile(r",(?!\d)")


def transliterate(text: str) -> str:
    """Roman letters to Urdu script, word by word; digits, punctuation and tokens unchanged."""
    text = _CURRENCY_RE.sub(r"\1 روپے", text)
    parts: list[str] = []
    for piece in _WORD_RE.findall(text):
        if piece[:1].isascii() and piece[:1].isalpha():
            parts.append(_transliterate_word(piece))
        else:
            parts.append(_TEXT_COMMA_RE.sub("،", piece))
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# Phrase banks: kind -> register -> variants. "mix" is the code-switching caller's register.
# Slots: {name} {agent} {org} {details} {echo} {when} {amount} {label} {token} and gendered
# agent verbs ({rahi} {chahti} {sakti} {deti} {leti} {batati} {karti}; {u_rahi} ... in Urdu script).

_Bank = Mapping[str, tuple[str, ...]]

_AGENT: Final[Mapping[str, _Bank]] = {
    "salutation": {
        "en": ("Hello", "Hi", "Good day"),
        "ru": ("Assalam o alaikum", "Assalam-o-alaikum", "Aadaab"),
        "ur": ("السلام علیکم", "آداب"),
    },
    "intro_both": {
        "en": ("this is {agent} from {org}.", "my name is {agent} and I'm calling from {org}."),
        "ru": (
            "main {org} se {agent} baat kar {rahi} hoon.",
            "mera naam {agent} hai, main {org} se call kar {rahi} hoon.",
        ),
        "ur": (
            "میں {org} سے {agent} بات کر {u_rahi} ہوں۔",
            "میرا نام {agent} ہے، میں {org} سے کال کر {u_rahi} ہوں۔",
        ),
    },
    "intro_org": {
        "en": ("I'm calling from {org}.", "this is a call from {org}."),
        "ru": ("main {org} se baat kar {rahi} hoon.", "yeh call {org} ki taraf se hai."),
        "ur": ("میں {org} سے بات کر {u_rahi} ہوں۔", "یہ کال {org} کی طرف سے ہے۔"),
    },
    "intro_agent": {
        "en": ("this is {agent}.", "my name is {agent}."),
        "ru": ("main {agent} baat kar {rahi} hoon.", "mera naam {agent} hai."),
        "ur": ("میں {agent} بات کر {u_rahi} ہوں۔", "میرا نام {agent} ہے۔"),
    },
    "intro_none": {
        "en": ("I'm calling with a quick update.", "I hope you're well."),
        "ru": (
            "umeed hai aap khairiyat se hain.",
            "main aap se ek zaroori baat karna {chahti} thi.",
        ),
        "ur": ("امید ہے آپ خیریت سے ہیں۔", "میں آپ سے ایک ضروری بات کرنا {u_chahti} تھی۔"),
    },
    "identity": {
        "en": ("Am I speaking with {name}?", "Is this {name}?"),
        "ru": ("Kya meri baat {name} se ho rahi hai?", "Kya aap {name} hain?"),
        "ur": ("کیا میری بات {name} سے ہو رہی ہے؟", "کیا آپ {name} ہیں؟"),
    },
    "how_are_you": {
        "en": ("How are you today?",),
        "ru": ("Aap kaise hain?", "Kya haal hai aap ka?"),
        "ur": ("آپ کیسے ہیں؟",),
    },
    "purpose": {
        "en": (
            "I'm calling to let you know that {details}.",
            "Just a quick reminder: {details}.",
            "The reason for my call is that {details}.",
        ),
        "ru": (
            "Main yeh batane ke liye call kar {rahi} thi ke {details}.",
            "Bas yaad dilana tha ke {details}.",
            "Call ka maqsad yeh hai ke {details}.",
        ),
        "ur": (
            "میں یہ بتانے کے لیے کال کر {u_rahi} تھی کہ {details}۔",
            "بس یاد دلانا تھا کہ {details}۔",
            "کال کا مقصد یہ ہے کہ {details}۔",
        ),
    },
    "vague_purpose": {
        "en": ("I'm calling about your account with us.", "I just wanted to check in with you."),
        "ru": (
            "Main aap ke account ke silsile mein call kar {rahi} thi.",
            "Bas aap se ek baat karni thi.",
        ),
        "ur": ("میں آپ کے اکاؤنٹ کے سلسلے میں کال کر {u_rahi} تھی۔", "بس آپ سے ایک بات کرنی تھی۔"),
    },
    "repeat": {
        "en": ("Of course. Once more: {details}.", "Sure, let me repeat that: {details}."),
        "ru": (
            "Jee, main dobara {batati} hoon: {details}.",
            "Koi baat nahi, phir se {batati} hoon: {details}.",
        ),
        "ur": (
            "جی، میں دوبارہ {u_batati} ہوں: {details}۔",
            "کوئی بات نہیں، پھر سے {u_batati} ہوں: {details}۔",
        ),
    },
    "repeat_slow": {
        "en": ("Let me say it slowly: {details}.",),
        "ru": ("Main aahista {batati} hoon. {details}.",),
        "ur": ("میں آہستہ {u_batati} ہوں۔ {details}۔",),
    },
    "explain_who": {
        "en": ("Sorry, I should explain.", "Of course, let me explain."),
        "ru": ("Maazrat, main wazahat kar deti hoon.", "Jee, main bata {deti} hoon."),
        "ur": ("معذرت، میں وضاحت کر دیتی ہوں۔", "جی، میں بتا {u_deti} ہوں۔"),
    },
    "apologise_end": {
        "en": (
            "I'm sorry to have bothered you. I'll let you go. Goodbye.",
            "I'm sorry for the trouble, I won't take any more of your time. Have a good day.",
            "I completely understand, and I apologise for disturbing you. Goodbye.",
        ),
        "ru": (
            "Maazrat, aap ko pareshan kiya. Main aap ko aur tang nahi karti. Allah hafiz.",
            "Maazrat chahti hoon, aap ka mazeed waqt nahi lete. Allah hafiz.",
            "Main samajh sakti hoon, takleef ke liye maafi. Khuda hafiz.",
        ),
        "ur": (
            "معذرت چاہتے ہیں، آپ کا مزید وقت نہیں لیتے۔ اللہ حافظ۔",
            "میں سمجھ {u_sakti} ہوں، تکلیف کے لیے معافی۔ خدا حافظ۔",
        ),
    },
    "apologise_remove": {
        "en": (
            "Of course. I'm sorry for the bother, and I've noted that you don't want further calls. Goodbye.",
            "I apologise. I'll make sure your number is removed from our list. Goodbye.",
            "Understood, I'm sorry. We won't call you again. Have a good day.",
        ),
        "ru": (
            "Jee, bilkul samajh gayi. Aap ko mazeed call nahi ki jayegi, maazrat. Khuda hafiz.",
            "Maazrat, main aap ka number list se hata {deti} hoon. Aainda call nahi aayegi. Allah hafiz.",
            "Jee bilkul, maafi chahte hain. Aap ka number hata diya jayega. Khuda hafiz.",
        ),
        "ur": (
            "جی، بالکل۔ آپ کو مزید کال نہیں کی جائے گی، معذرت۔ خدا حافظ۔",
            "معذرت، میں آپ کا نمبر فہرست سے ہٹا {u_deti} ہوں۔ آئندہ کال نہیں آئے گی۔ اللہ حافظ۔",
            "جی بالکل، معافی چاہتے ہیں۔ آپ کا نمبر ہٹا دیا جائے گا۔ خدا حافظ۔",
        ),
    },
    "push": {
        "en": (
            "I hear you, but this is important: {details}.",
            "I understand, but it'll only take a minute: {details}.",
            "Please, just one moment. {details}.",
        ),
        "ru": (
            "Sirf ek zaroori baat hai: {details}.",
            "Main samajh {sakti} hoon, bas ek minute lagega: {details}.",
            "Bas do minute dijiye. {details}.",
        ),
        "ur": (
            "صرف ایک ضروری بات ہے: {details}۔",
            "میں سمجھ {u_sakti} ہوں، بس ایک منٹ لگے گا: {details}۔",
            "بس دو منٹ دیجیے۔ {details}۔",
        ),
    },
    "wrong_apology": {
        "en": (
            "So sorry, I must have the wrong number. Take care.",
            "Oh, I'm sorry to have bothered you. Have a good day.",
            "My apologies, wrong number. Goodbye.",
        ),
        "ru": (
            "Maazrat chahti hoon, shayad number ghalat hai. Allah hafiz.",
            "Oh, maazrat, ghalat number lag gaya. Allah hafiz.",
            "Maafi chahti hoon, takleef ke liye. Khuda hafiz.",
        ),
        "ur": (
            "معذرت، شاید نمبر غلط ہے۔ اللہ حافظ۔",
            "اوہ، معذرت، غلط نمبر لگ گیا۔ اللہ حافظ۔",
            "تکلیف کے لیے معافی چاہتے ہیں۔ خدا حافظ۔",
        ),
    },
    "wrong_message": {
        "en": (
            "Would you be able to pass a message to {name}?",
            "Do you know how I can reach {name}?",
        ),
        "ru": (
            "Kya aap {name} ko paigham de sakte hain?",
            "Kya aap ko pata hai {name} se kaise rabta ho sakta hai?",
        ),
        "ur": (
            "کیا آپ {name} کو پیغام دے سکتے ہیں؟",
            "کیا آپ کو معلوم ہے {name} سے کیسے رابطہ ہو سکتا ہے؟",
        ),
    },
    "busy_later": {
        "en": (
            "Of course, I'll try again later. Sorry to disturb you.",
            "No problem, when would be a better time?",
            "Sorry to catch you at a bad time. I'll call back later.",
        ),
        "ru": (
            "Jee, koi baat nahi. Maazrat, baad mein rabta karte hain.",
            "Koi baat nahi, kis waqt call karoon?",
            "Koi masla nahi, main baad mein call kar {leti} hoon.",
        ),
        "ur": (
            "جی، کوئی بات نہیں۔ معذرت، بعد میں رابطہ کرتے ہیں۔",
            "کوئی بات نہیں، کس وقت کال کروں؟",
            "کوئی مسئلہ نہیں، میں بعد میں کال کر {u_leti} ہوں۔",
        ),
    },
    "callback_agree": {
        "en": (
            "No problem at all, {when} it is.",
            "Of course, I'll call you back {when}.",
            "Sure, I've noted it. We'll call you {when}.",
        ),
        "ru": (
            "Bilkul, {when} phir baat karte hain.",
            "Jee zaroor, main aap ko {when} dobara call kar {leti} hoon.",
            "Theek hai, {when} call kar lenge.",
        ),
        "ur": (
            "بالکل، {when} پھر بات کرتے ہیں۔",
            "جی ضرور، میں آپ کو {when} دوبارہ کال کر {u_leti} ہوں۔",
            "ٹھیک ہے، {when} کال کر لیں گے۔",
        ),
    },
    "callback_insist": {
        "en": ("Sure, but quickly, just so you know: {details}.",),
        "ru": ("Jee zaroor, bas itna bata doon ke {details}.",),
        "ur": ("جی ضرور، بس اتنا بتا دوں کہ {details}۔",),
    },
    "price_amount": {
        "en": ("The total comes to {amount}.", "It's {amount} in total."),
        "ru": ("Kul {amount} banta hai.", "Total {amount} hai."),
        "ur": ("کل رقم {amount} بنتی ہے۔", "ٹوٹل {amount} ہے۔"),
    },
    "price_none": {
        "en": ("I'm afraid there's no discount right now, but I can send you the details.",),
        "ru": ("Filhal koi discount nahi hai, lekin main details SMS kar {deti} hoon.",),
        "ur": ("فی الحال کوئی رعایت نہیں ہے، لیکن میں تفصیلات بھیج {u_deti} ہوں۔",),
    },
    "token_sorry": {
        "en": ("Sorry about that, I'll check the details and call you back.",),
        "ru": ("Maazrat, main details check kar ke dobara call kar {leti} hoon.",),
        "ur": ("معذرت، میں تفصیلات دیکھ کر دوبارہ کال کر {u_leti} ہوں۔",),
    },
    "noted": {
        "en": ("Great, you're all set.", "Perfect, I've noted that."),
        "ru": ("Bohat acha, note kar liya hai.", "Shukriya, confirm ho gaya."),
        "ur": ("بہت اچھا، نوٹ کر لیا ہے۔", "شکریہ، تصدیق ہو گئی۔"),
    },
    "close": {
        "en": (
            "Thank you so much for your time. Goodbye!",
            "Thanks, {name}. Have a lovely day, goodbye.",
        ),
        "ru": ("Aap ke waqt ka bohat shukriya. Allah hafiz.", "Shukriya {name}, Khuda hafiz."),
        "ur": ("آپ کے وقت کا بہت شکریہ۔ اللہ حافظ۔", "شکریہ {name}، خدا حافظ۔"),
    },
    "plain_end": {
        "en": ("Okay.", "Alright, noted."),
        "ru": ("Theek hai.", "Jee, acha."),
        "ur": ("ٹھیک ہے۔", "جی، اچھا۔"),
    },
    "anything_else": {
        "en": ("Is there anything else I can help with?",),
        "ru": ("Kya main aur kisi cheez mein madad kar {sakti} hoon?",),
        "ur": ("کیا میں کسی اور چیز میں مدد کر {u_sakti} ہوں؟",),
    },
}

_CONFIRM_Q: Final[Mapping[str, _Bank]] = {
    "generic": {
        "en": (
            "Could you please confirm that? A yes or no is fine.",
            "Can you confirm this works for you, yes or no?",
        ),
        "ru": ("Kya aap confirm kar sakte hain? Bas haan ya nahi mein bata dijiye.",),
        "ur": ("کیا آپ اس کی تصدیق کر سکتے ہیں؟ بس ہاں یا نہیں میں بتا دیجیے۔",),
    },
    "appointment": {
        "en": ("Will you be able to make it? Please confirm with a yes or no.",),
        "ru": ("Kya aap tashreef la sakenge? Haan ya nahi mein bata dijiye.",),
        "ur": ("کیا آپ تشریف لا سکیں گے؟ براہ کرم ہاں یا نہیں میں بتائیے۔",),
    },
    "payment": {
        "en": ("Can you confirm the payment will be made by then, yes or no?",),
        "ru": ("Kya aap tab tak payment kar denge? Haan ya nahi?",),
        "ur": ("کیا آپ تب تک ادائیگی کر دیں گے؟ ہاں یا نہیں؟",),
    },
    "delivery": {
        "en": ("Will someone be available to receive it? Yes or no?",),
        "ru": ("Kya us waqt ghar par koi mojood hoga? Haan ya nahi?",),
        "ur": ("کیا اس وقت گھر پر کوئی موجود ہوگا؟ ہاں یا نہیں؟",),
    },
    "renewal": {
        "en": ("Would you like to renew? Please say yes or no.",),
        "ru": ("Kya aap renew karwana chahenge? Haan ya nahi?",),
        "ur": ("کیا آپ تجدید کروانا چاہیں گے؟ ہاں یا نہیں؟",),
    },
    "survey": {
        "en": ("May I ask you two quick questions? Yes or no?",),
        "ru": ("Kya main aap se do mukhtasar sawal pooch {sakti} hoon? Haan ya nahi?",),
        "ur": ("کیا میں آپ سے دو مختصر سوال پوچھ {u_sakti} ہوں؟ ہاں یا نہیں؟",),
    },
}

_TOPIC_QA: Final[Mapping[str, tuple[_Bank, _Bank]]] = {
    "appointment": (
        {
            "en": ("Do I need to bring anything?",),
            "ru": ("Kya mujhe kuch saath lana hoga?",),
            "ur": ("کیا مجھے کچھ ساتھ لانا ہوگا؟",),
            "mix": ("Koi documents bring karne hain?",),
        },
        {
            "en": ("Just your ID card and any previous reports.",),
            "ru": ("Bas apna CNIC aur purani reports saath le aaiye ga.",),
            "ur": ("بس اپنا شناختی کارڈ اور پرانی رپورٹیں ساتھ لے آئیے گا۔",),
        },
    ),
    "payment": (
        {
            "en": ("How can I pay?",),
            "ru": ("Payment kaise kar sakte hain?",),
            "ur": ("ادائیگی کیسے کر سکتے ہیں؟",),
            "mix": ("Payment ka kya method hai, online ho sakti hai?",),
        },
        {
            "en": ("You can pay in the app, by bank transfer or at any branch.",),
            "ru": ("Aap app, bank transfer ya kisi bhi branch se payment kar sakte hain.",),
            "ur": ("آپ ایپ، بینک ٹرانسفر یا کسی بھی برانچ سے ادائیگی کر سکتے ہیں۔",),
        },
    ),
    "delivery": (
        {
            "en": ("What time will the rider come?",),
            "ru": ("Rider kis waqt tak aayega?",),
            "ur": ("رائیڈر کس وقت تک آئے گا؟",),
            "mix": ("Rider ka expected time kya hai?",),
        },
        {
            "en": ("The rider will call you before arriving.",),
            "ru": ("Rider aane se pehle aap ko call karega.",),
            "ur": ("رائیڈر آنے سے پہلے آپ کو کال کرے گا۔",),
        },
    ),
    "renewal": (
        {
            "en": ("What happens if I don't renew?",),
            "ru": ("Agar renew na karein to kya hoga?",),
            "ur": ("اگر تجدید نہ کروائیں تو کیا ہوگا؟",),
            "mix": ("Agar renew na karein to what happens?",),
        },
        {
            "en": ("The service will simply stop after the expiry date.",),
            "ru": ("Phir expiry ke baad service band ho jayegi.",),
            "ur": ("پھر میعاد ختم ہونے کے بعد سروس بند ہو جائے گی۔",),
        },
    ),
    "survey": (
        {
            "en": ("How long will this take?",),
            "ru": ("Kitna waqt lagega?",),
            "ur": ("کتنا وقت لگے گا؟",),
            "mix": ("Kitna time lagega, I'm a bit busy?",),
        },
        {
            "en": ("Just two minutes.",),
            "ru": ("Bas do minute.",),
            "ur": ("بس دو منٹ۔",),
        },
    ),
    "generic": (
        {
            "en": ("Where did you get my number?",),
            "ru": ("Aap ko mera number kahan se mila?",),
            "ur": ("آپ کو میرا نمبر کہاں سے ملا؟",),
            "mix": ("Mera number aap ko kahan se mila, by the way?",),
        },
        {
            "en": ("You're registered with us, that's why we called.",),
            "ru": ("Aap hamare registered customer hain, isi liye call ki.",),
            "ur": ("آپ ہمارے رجسٹرڈ صارف ہیں، اسی لیے کال کی۔",),
        },
    ),
}

_CALLER: Final[Mapping[str, _Bank]] = {
    "hello": {
        "en": ("Hello?", "Hi, hello?", "Yes, hello?"),
        "ru": ("Haan ji?", "Hello?", "Jee, hello?"),
        "ur": ("جی، ہیلو؟", "ہیلو؟", "جی؟"),
        "mix": ("Hello? Haan ji?", "Jee, hello, who's this?"),
    },
    "hello_cold": {
        "en": ("Hello? Who's this?", "Hello?"),
        "ru": ("Hello? Kaun?", "Haan ji? Kaun bol raha hai?"),
        "ur": ("ہیلو؟ کون؟", "جی، کون بول رہا ہے؟"),
        "mix": ("Hello? Kaun, who is this?",),
    },
    "who": {
        "en": ("Who is this? What's this about?", "Sorry, who is calling, and why?"),
        "ru": ("Kaun? Kis silsile mein?", "Kaun sahib? Kis baare mein call ki hai?"),
        "ur": ("کون؟ کس سلسلے میں؟", "کون صاحب؟ کس بارے میں کال کی ہے؟"),
        "mix": ("Sorry, kaun? What is this regarding?",),
    },
    "ack_open": {
        "en": ("Yes, go ahead.", "Yes?", "Hi, yes, how can I help?"),
        "ru": ("Jee, bataiye.", "Jee, farmaiye.", "Haan ji, boliye."),
        "ur": ("جی، بتائیے۔", "جی، فرمائیے۔", "ہاں جی، بولیے۔"),
        "mix": ("Okay, jee bataiye.", "Yes, boliye."),
    },
    "aware": {
        "en": ("Oh yes, I was expecting your call.", "Yes, I remember, go ahead."),
        "ru": ("Haan ji, mujhe yaad hai, bataiye.", "Jee, mujhe pata tha aap ki call aayegi."),
        "ur": ("ہاں جی، مجھے یاد ہے، بتائیے۔", "جی، مجھے پتا تھا آپ کی کال آئے گی۔"),
        "mix": ("Haan, I remember, bataiye.",),
    },
    "identity_yes": {
        "en": ("Yes, this is {name}.", "Speaking, this is {name}."),
        "ru": ("Jee, main hi {name} hoon.", "Haan ji, {name} baat kar rahe hain."),
        "ur": ("جی، میں ہی {name} ہوں۔", "ہاں جی، {name} بات کر رہے ہیں۔"),
        "mix": ("Yes, main hi {name} hoon.",),
    },
    "what_about": {
        "en": ("What is it about, exactly?", "Okay, what's this regarding?"),
        "ru": ("Kis cheez ke baare mein?", "Jee, kya baat hai?"),
        "ur": ("کس چیز کے بارے میں؟", "جی، کیا بات ہے؟"),
        "mix": ("Kis baare mein, exactly?",),
    },
    "wrong": {
        "en": (
            "Wrong number, sorry. No {name} here.",
            "I don't know any {name}.",
            "Sorry, this isn't {name}'s number.",
            "You have the wrong number, there's no {name} here.",
        ),
        "ru": (
            "Yahan koi {name} nahi hai, ghalat number hai.",
            "Yeh {name} ka number nahi hai.",
            "Aap ne ghalat number milaya hai, yahan koi {name} nahi hain.",
        ),
        "ur": (
            "یہاں کوئی {name} نہیں ہے، غلط نمبر ہے۔",
            "یہ {name} کا نمبر نہیں ہے۔",
            "آپ نے غلط نمبر ملایا ہے، یہاں کوئی {name} نہیں ہیں۔",
        ),
        "mix": ("Sorry, yeh {name} ka number nahi hai. Wrong number.",),
    },
    "wrong_anon": {
        "en": (
            "Sorry, wrong number.",
            "Who? I think you've dialled the wrong number.",
            "I think you have the wrong number.",
        ),
        "ru": (
            "Ghalat number hai jee.",
            "Aap ne ghalat number milaya hai.",
        ),
        "ur": (
            "غلط نمبر ہے جی۔",
            "آپ نے غلط نمبر ملایا ہے۔",
        ),
        "mix": ("Wrong number hai, sorry.",),
    },
    "wrong_final": {
        "en": ("No, I don't know them. Bye.", "No idea, sorry. Goodbye."),
        "ru": ("Nahi, hum unhein nahi jaante. Khuda hafiz.", "Mujhe nahi pata. Allah hafiz."),
        "ur": ("نہیں، ہم انہیں نہیں جانتے۔ خدا حافظ۔", "مجھے نہیں پتا۔ اللہ حافظ۔"),
        "mix": ("No idea, sorry. Allah hafiz.",),
    },
    "busy": {
        "en": (
            "Can't talk now, I'm driving.",
            "I'm really busy, sorry. Another time.",
            "I'm busy right now, let's talk later.",
            "Sorry, I'm in a meeting, call me later.",
        ),
        "ru": (
            "Abhi drive kar rahe hain, baad mein baat karein.",
            "Abhi waqt nahi hai, baad mein.",
            "Abhi busy hoon, baad mein baat karte hain.",
            "Main abhi meeting mein hoon, baad mein call karein.",
        ),
        "ur": (
            "ابھی وقت نہیں ہے، بعد میں۔",
            "ابھی مصروف ہوں، بعد میں بات کرتے ہیں۔",
            "میں ابھی میٹنگ میں ہوں، بعد میں کال کریں۔",
        ),
        "mix": ("Sorry, abhi I'm really busy, baad mein call karein please.",),
    },
    "busy_when": {
        "en": ("I'm busy right now. Call me {when}.",),
        "ru": ("Abhi busy hoon, {when} call kar lijiye ga.",),
        "ur": ("ابھی مصروف ہوں، {when} کال کر لیجیے گا۔",),
        "mix": ("Abhi busy hoon, please call {when}.",),
    },
    "busy_final": {
        "en": (
            "I really have to go. Bye.",
            "Sorry, got to go.",
            "Not now, sorry. Bye.",
            "Okay, later. Bye.",
        ),
        "ru": ("Nahi, abhi nahi. Khuda hafiz.", "Theek hai, baad mein. Allah hafiz."),
        "ur": ("نہیں، ابھی نہیں۔ خدا حافظ۔", "ٹھیک ہے، بعد میں۔ اللہ حافظ۔"),
        "mix": ("Not now, sorry. Allah hafiz.",),
    },
    "object": {
        "en": (
            "Not again. Who gave you my number?",
            "I'm not interested in whatever this is.",
            "Why do you people keep calling me? I'm not interested.",
            "Look, I don't have time for this.",
        ),
        "ru": (
            "Phir se? Mera number aap ko kisne diya?",
            "Aap log baar baar kyun call karte ho? Mujhe koi dilchaspi nahi.",
            "Dekhiye, mere paas in baaton ka waqt nahi hai.",
        ),
        "ur": (
            "پھر سے؟ میرا نمبر آپ کو کس نے دیا؟",
            "آپ لوگ بار بار کیوں فون کرتے ہیں؟ مجھے کوئی دلچسپی نہیں۔",
            "دیکھیے، میرے پاس ان باتوں کا وقت نہیں ہے۔",
        ),
        "mix": ("Yaar, why do you people keep calling? I'm not interested, seriously.",),
    },
    "stop": {
        "en": (
            "Enough. Don't ever call this number again.",
            "Stop calling me! Take me off your list.",
            "I said I'm not interested. Don't call again.",
        ),
        "ru": (
            "Band karein yeh calls! Dobara call mat kijiye ga.",
            "Maine kaha na, dilchaspi nahi. Dobara call mat karna.",
        ),
        "ur": (
            "بند کریں یہ کالیں! دوبارہ فون مت کیجیے گا۔",
            "میں نے کہا نا، دلچسپی نہیں۔ دوبارہ کال مت کرنا۔",
        ),
        "mix": ("Please stop calling, mujhe koi interest nahi. Bye.",),
    },
    "soften": {
        "en": ("Fine, what is it? Make it quick.",),
        "ru": ("Acha, jaldi bataiye kya baat hai.",),
        "ur": ("اچھا، جلدی بتائیے کیا بات ہے۔",),
        "mix": ("Okay fine, jaldi bataiye, what is it?",),
    },
    "dnc": {
        "en": (
            "Don't call me again, please. Put me on your do-not-call list.",
            "I want my number taken off your list.",
            "Please remove my number from your list and don't call me again.",
        ),
        "ru": (
            "Please mujhe aainda call na karein, mera number list se nikal dein.",
            "Mera number apni list se hata dein, dobara call mat kijiye ga.",
        ),
        "ur": (
            "براہ کرم آئندہ مجھے کال نہ کریں، میرا نمبر فہرست سے نکال دیں۔",
            "میرا نمبر اپنی فہرست سے ہٹا دیں، دوبارہ کال مت کیجیے گا۔",
        ),
        "mix": ("Please mera number apni list se remove kar dein, don't call again.",),
    },
    "dnc_final": {
        "en": (
            "No. Remove my number. Goodbye.",
            "I said don't call me. Goodbye.",
        ),
        "ru": ("Maine kaha na, call mat karein. Khuda hafiz.",),
        "ur": ("میں نے کہا نا، کال مت کریں۔ خدا حافظ۔",),
        "mix": ("I said don't call, bas. Khuda hafiz.",),
    },
    "callback": {
        "en": (
            "I'm in the middle of something. Could you call {when}?",
            "Can we do this {when} instead?",
            "This isn't a good time. Can you call me back {when}?",
        ),
        "ru": (
            "Kya hum {when} baat kar sakte hain?",
            "Abhi mushkil hai, kya aap mujhe {when} dobara call kar sakte hain?",
        ),
        "ur": (
            "کیا ہم {when} بات کر سکتے ہیں؟",
            "ابھی مشکل ہے، کیا آپ مجھے {when} دوبارہ کال کر سکتے ہیں؟",
        ),
        "mix": ("Abhi thoda mushkil hai, can you call me {when}?",),
    },
    "callback_final": {
        "en": ("Okay, later then. Bye.",),
        "ru": ("Acha theek hai, baad mein baat karte hain. Allah hafiz.",),
        "ur": ("اچھا ٹھیک ہے، بعد میں بات کرتے ہیں۔ اللہ حافظ۔",),
        "mix": ("Okay theek hai, baad mein baat karte hain. Bye.",),
    },
    "repeat": {
        "en": ("Sorry? Could you say that again?", "What was that? Please repeat."),
        "ru": ("Jee? Dobara bataiye.", "Mujhe samajh nahi aaya, dobara bataiye ga?"),
        "ur": ("جی؟ دوبارہ بتائیے۔", "مجھے سمجھ نہیں آیا، دوبارہ بتائیے گا؟"),
        "mix": ("Sorry, I didn't get it, dobara bataiye please?",),
    },
    "repeat_slow": {
        "en": ("I still didn't follow. Slowly, please?",),
        "ru": ("Abhi bhi samajh nahi aaya, zara aahista bataiye.",),
        "ur": ("ابھی بھی سمجھ نہیں آیا، ذرا آہستہ بتائیے۔",),
        "mix": ("Still samajh nahi aaya, thoda slowly bataiye.",),
    },
    "noise": {
        "en": (
            "Sorry, it's really noisy here. What did you say?",
            "One second, the kids are loud. Can you repeat?",
        ),
        "ru": (
            "Ek minute, yahan bahut shor hai... kya kaha aap ne?",
            "Bachon ka shor hai, dobara bataiye ga?",
        ),
        "ur": ("ایک منٹ، یہاں بہت شور ہے... آپ نے کیا کہا؟", "بچوں کا شور ہے، دوبارہ بتائیے گا؟"),
        "mix": ("One sec, yahan bohat noise hai... what did you say?",),
    },
    "price": {
        "en": ("How much will this cost? Is there any discount?",),
        "ru": ("Iska kitna kharcha aayega? Koi discount hai?",),
        "ur": ("اس کا کتنا خرچہ آئے گا؟ کوئی رعایت ہے؟",),
        "mix": ("Iska total cost kya hoga? Koi discount hai?",),
    },
    "price_balk": {
        "en": ("That's too expensive for me. I'll think about it. Bye.",),
        "ru": ("Yeh to kaafi mehnga hai. Soch kar batate hain. Khuda hafiz.",),
        "ur": ("یہ تو کافی مہنگا ہے۔ سوچ کر بتاتے ہیں۔ خدا حافظ۔",),
        "mix": ("Yeh to kaafi expensive hai, I'll think about it. Bye.",),
    },
    "yes": {
        "en": ("Yes, that's fine.", "Yes, sure.", "Yes, I can confirm."),
        "ru": ("Jee haan, bilkul.", "Jee haan, theek hai.", "Haan ji, confirm hai."),
        "ur": ("جی ہاں، بالکل۔", "جی ہاں، ٹھیک ہے۔", "ہاں جی، تصدیق ہے۔"),
        "mix": ("Yes yes, bilkul, that's fine.", "Haan ji, confirmed."),
    },
    "echo": {
        "en": ("{echo} works for me.", "{echo} is fine."),
        "ru": ("{echo} theek hai.", "{echo} mujhe yaad rahega."),
        "ur": ("{echo} ٹھیک ہے۔", "{echo} مجھے یاد رہے گا۔"),
        "mix": ("{echo} is fine.",),
    },
    "unsure": {
        "en": ("I'm not sure, I'll have to check.",),
        "ru": ("Pata nahi, check kar ke batate hain.",),
        "ur": ("پتا نہیں، دیکھ کر بتاتے ہیں۔",),
        "mix": ("Not sure yaar, check kar ke batate hain.",),
    },
    "ack": {
        "en": ("Okay, thanks for letting me know.", "Alright."),
        "ru": ("Acha, theek hai.", "Jee, samajh gaye."),
        "ur": ("اچھا، ٹھیک ہے۔", "جی، سمجھ گئے۔"),
        "mix": ("Okay theek hai, thanks.",),
    },
    "token": {
        "en": ('Sorry, what {label}? What is "{token}"?',),
        "ru": ('Kaunsi {label}? "{token}" kya hai? Samajh nahi aaya.',),
        "ur": ('کون سی {label}؟ "{token}" کیا ہے؟ سمجھ نہیں آیا۔',),
        "mix": ('Sorry, kaunsi {label}? "{token}" what?',),
    },
    "not_interested": {
        "en": ("I'm not interested, thanks. Bye.",),
        "ru": ("Mujhe dilchaspi nahi. Khuda hafiz.",),
        "ur": ("مجھے دلچسپی نہیں۔ خدا حافظ۔",),
        "mix": ("Not interested, thanks. Khuda hafiz.",),
    },
    "no_thanks": {
        "en": ("No, that's all. Thanks, bye.",),
        "ru": ("Nahi, bas itna hi. Shukriya, Allah hafiz.",),
        "ur": ("نہیں، بس اتنا ہی۔ شکریہ، اللہ حافظ۔",),
        "mix": ("No, that's all. Thank you, Allah hafiz.",),
    },
    "bye_short": {
        "en": ("Bye.", "Goodbye."),
        "ru": ("Allah hafiz.", "Khuda hafiz."),
        "ur": ("اللہ حافظ۔", "خدا حافظ۔"),
        "mix": ("Bye, Allah hafiz.", "Okay bye."),
    },
    "fine": {
        "en": ("I'm fine, thanks. What's this about?", "Good, thanks. Yes?"),
        "ru": ("Main theek hoon, shukriya. Bataiye?", "Alhamdulillah, theek. Jee, farmaiye?"),
        "ur": ("میں ٹھیک ہوں، شکریہ۔ بتائیے؟", "الحمدللہ، ٹھیک۔ جی، فرمائیے؟"),
        "mix": ("I'm fine, shukriya. Bataiye?",),
    },
    "bye": {
        "en": ("Okay, thank you. Bye.", "Thanks, goodbye.", "Alright, bye."),
        "ru": ("Theek hai, shukriya. Allah hafiz.", "Acha, Khuda hafiz.", "Shukriya, Allah hafiz."),
        "ur": ("ٹھیک ہے، شکریہ۔ اللہ حافظ۔", "اچھا، خدا حافظ۔", "شکریہ، اللہ حافظ۔"),
        "mix": ("Okay thank you, Allah hafiz.", "Thanks, bye."),
    },
}

_WHEN: Final[_Bank] = {
    "en": ("this evening around 6", "tomorrow morning", "after 5 pm", "on Monday"),
    "ru": ("shaam 6 baje", "kal subah", "5 baje ke baad", "Monday ko"),
    "ur": ("شام 6 بجے", "کل صبح", "5 بجے کے بعد", "پیر کو"),
    "mix": ("shaam 6 baje", "tomorrow morning", "after 5 pm"),
}

_GENDER_WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "f": {
        "rahi": "rahi",
        "chahti": "chahti",
        "sakti": "sakti",
        "deti": "deti",
        "leti": "leti",
        "batati": "batati",
        "karti": "karti",
        "u_rahi": "رہی",
        "u_chahti": "چاہتی",
        "u_sakti": "سکتی",
        "u_deti": "دیتی",
        "u_leti": "لیتی",
        "u_batati": "بتاتی",
        "u_karti": "کرتی",
    },
    "m": {
        "rahi": "raha",
        "chahti": "chahta",
        "sakti": "sakta",
        "deti": "deta",
        "leti": "leta",
        "batati": "batata",
        "karti": "karta",
        "u_rahi": "رہا",
        "u_chahti": "چاہتا",
        "u_sakti": "سکتا",
        "u_deti": "دیتا",
        "u_leti": "لیتا",
        "u_batati": "بتاتا",
        "u_karti": "کرتا",
    },
}
_MALE_NAMES: Final = frozenset(
    [
        "ali",
        "ahmed",
        "ahmad",
        "hamza",
        "usman",
        "bilal",
        "hassan",
        "hasan",
        "hussain",
        "omar",
        "umar",
        "imran",
        "kamran",
        "faisal",
        "zain",
        "saad",
        "asad",
        "danish",
        "fahad",
        "adnan",
        "tariq",
        "junaid",
        "waqas",
        "salman",
        "farhan",
        "rizwan",
        "yasir",
        "shahid",
        "arslan",
        "haris",
        "talha",
        "nasir",
        "javed",
        "rashid",
        "john",
        "james",
        "david",
        "michael",
    ]
)


# --------------------------------------------------------------------------------------------
# The scene: everything parsed from the setup, before any chance is involved


@dataclass(slots=True)
class _Scene:
    register: Register
    greeting_on: bool
    greeting: str | None
    literal_greeting: str | None
    greeting_purpose: bool
    greeting_names: bool
    features: frozenset[str]
    vague: bool
    topic: str
    facts: list[_Fact]
    name: _Fact | None
    name_referenced: bool
    agent_name: str | None
    org: str | None
    gender: str
    traits: frozenset[str]
    cold: bool
    aware: bool
    record: dict[str, _Fact] = field(default_factory=dict)

    @property
    def details_facts(self) -> list[_Fact]:
        skip = {"name", "agent", "org"}
        return [f for f in self.facts if f.kind not in skip]


_QUOTE_RE: Final = re.compile(
    r"[\"“”«»](.{4,}?)[\"“”«»]|(?:\bsay|\bkahein|\bkahiye|کہیں)\s*:\s*(.+)$", re.I | re.M
)
_AGENT_NAME_RES: Final = (
    re.compile(r"\b(?i:you are|you're|your name is)\s+([A-Z][a-z]+)\b"),
    re.compile(r"\b(?i:aap|ap)\s+([A-Z][a-z]+)\s+(?:hain|ho|hai)\b"),
    re.compile(r"\b(?:aap ka|aapka|apka) naam\s+([A-Z][a-z]+)\b", re.I),
    re.compile(r"آپ کا نام\s+(\S+)\s+ہے"),
)
_ORG_RES: Final = (
    re.compile(
        r"\b(?:from|representing|on behalf of|calling for|at)\s+(?:the\s+)?"
        r"([A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,3})"
    ),
    re.compile(r"([A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,3})\s+(?:ki taraf se|ke liye kaam)"),
)
_NOT_NAMES: Final = frozenset(
    {"A", "An", "The", "Urdu", "English", "Roman", "Pakistan", "AM", "PM", "Nastaliq", "You"}
)
_COLD_CONTEXT: Final = (
    r"not expecting",
    r"doesn't know",
    r"does not know",
    r"unaware",
    r"no idea",
    r"cold call",
    r"never heard",
)


def _scene(setup: ConversationSetup) -> _Scene:
    agent = setup.config.get("agent") if isinstance(setup.config, Mapping) else None
    agent = agent if isinstance(agent, Mapping) else {}
    raw_instructions = agent.get("instructions")
    raw_instructions = raw_instructions if isinstance(raw_instructions, str) else ""
    greeting_on = agent.get("initialGreeting") is True
    raw_greeting = agent.get("greetingInstructions") if greeting_on else None
    raw_greeting = raw_greeting if isinstance(raw_greeting, str) and raw_greeting.strip() else None
    variables = setup.variables if isinstance(setup.variables, Mapping) else None

    instructions = substitute_variables(raw_instructions, variables)
    greeting = substitute_variables(raw_greeting, variables) if raw_greeting else None
    everything = instructions + "\n" + (greeting or "")
    features = frozenset(
        f for f, words in _FEATURE_KEYWORDS.items() if _mentions(everything, words)
    )
    literal = None
    greeting_purpose = False
    if greeting:
        quoted = _QUOTE_RE.search(greeting)
        if quoted:
            literal = (quoted.group(1) or quoted.group(2) or "").strip(" \"'“”«»") or None
        topic_words = tuple(w for words in _TOPIC_KEYWORDS.values() for w in words)
        greeting_purpose = _mentions(greeting, _PURPOSE_WORDS) or _mentions(greeting, topic_words)

    raws = [raw_instructions] + ([raw_greeting] if raw_greeting else [])
    facts = _referenced_facts(raws, everything, variables)
    record = _record_facts(variables)
    name = next((f for f in facts if f.kind == "name"), None)
    name_referenced = name is not None
    if name is None:
        name = record.get("name")

    agent_name = next((f.value for f in facts if f.kind == "agent" and f.value), None)
    agent_name = agent_name or (record["agent"].value if "agent" in record else None)
    if agent_name is None:
        for regex in _AGENT_NAME_RES:
            match = regex.search(instructions)
            if match and match.group(1) not in _NOT_NAMES:
                agent_name = match.group(1)
                break
    org = next((f.value for f in facts if f.kind == "org" and f.value), None)
    org = org or (record["org"].value if "org" in record else None)
    if org is None:
        customer = name.value if name else None
        for regex in _ORG_RES:
            for match in regex.finditer(instructions):
                candidate = match.group(1).strip(" .,'")
                if candidate and candidate != customer and candidate not in _NOT_NAMES:
                    org = candidate
                    break
            if org:
                break
    male = _mentions(instructions, (r"male", r"man", r"he/him", r"mard")) and not _mentions(
        instructions, (r"female", r"woman", r"she/her", r"aurat", r"larki")
    )
    if agent_name and agent_name.split()[0].lower() in _MALE_NAMES:
        male = True

    context = setup.context.strip() if isinstance(setup.context, str) else ""
    cold = (not context and not variables) or bool(context and _mentions(context, _COLD_CONTEXT))
    aware = bool(context) and not cold
    return _Scene(
        register=detect_register(instructions),
        greeting_on=greeting_on,
        greeting=greeting,
        literal_greeting=literal,
        greeting_purpose=greeting_purpose,
        greeting_names=bool(
            raw_greeting
            and (
                _mentions(raw_greeting, (r"names?", r"نام", r"naam"))
                or any(_kind(m.group(1)) == "name" for m in _TOKEN_RE.finditer(raw_greeting))
            )
        ),
        features=features,
        vague=len(instructions.split()) < 15,
        topic=_topic(everything),
        facts=facts,
        name=name,
        name_referenced=name_referenced,
        agent_name=agent_name,
        org=org,
        gender="m" if male else "f",
        traits=persona_traits(setup.persona if isinstance(setup.persona, Mapping) else {}),
        cold=cold,
        aware=aware,
        record=record,
    )


# --------------------------------------------------------------------------------------------
# Details: the key facts as one clause in each register


_CLAUSE_KINDS: Final = frozenset({"date", "time", "amount", "doctor", "order", "location"})


def _details(scene: _Scene, register: Register) -> str:
    facts = scene.details_facts
    by_kind: dict[str, str] = {}
    others: list[_Fact] = []
    for fact in facts:
        if fact.kind in _CLAUSE_KINDS and fact.kind not in by_kind:
            by_kind[fact.kind] = fact.shown(register)
        else:
            others.append(fact)
    org = transliterate(scene.org) if scene.org and register == "ur" else scene.org
    clause = _TOPIC_CLAUSES[scene.topic](by_kind, org, register)
    leftovers = _LEFTOVER[register]
    extra = [
        leftovers[k].format(v) for k, v in by_kind.items() if k not in _TOPIC_USES[scene.topic]
    ]
    extra += [
        _OTHER[register].format(label=f.label(register), value=f.shown(register)) for f in others
    ]
    sep = "، " if register == "ur" else ", "
    and_ = {"en": ", and ", "ru": ", aur ", "ur": "، اور "}[register]
    return clause + (and_ + sep.join(extra) if extra else "")


def _opt(value: str | None, template: str) -> str:
    return template.format(value) if value else ""


def _clause_appointment(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        when = _opt(k.get("date"), " on {}") + _opt(k.get("time"), " at {}")
        where = _opt(k.get("location"), " at {}")
        body = when + where
        return (
            "your appointment"
            + _opt(k.get("doctor"), " with {}")
            + (" is" + body if body else " is coming up")
        )
    if reg == "ru":
        body = (
            _opt(k.get("date"), " {} ko")
            + _opt(k.get("time"), " {}")
            + _opt(k.get("location"), " {} mein")
        )
        return (
            "aap ki appointment"
            + _opt(k.get("doctor"), " {} ke saath")
            + (body + " hai" if body else " jald hone wali hai")
        )
    body = (
        _opt(k.get("date"), " {} کو")
        + _opt(k.get("time"), " {}")
        + _opt(k.get("location"), " {} میں")
    )
    return (
        "آپ کی اپائنٹمنٹ"
        + _opt(k.get("doctor"), " {} کے ساتھ")
        + (body + " ہے" if body else " جلد ہونے والی ہے")
    )


def _clause_payment(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your payment"
            + _opt(k.get("amount"), " of {}")
            + " is due"
            + _opt(k.get("date"), " on {}")
        )
    if reg == "ru":
        return (
            "aap ki"
            + _opt(k.get("amount"), " {} ki")
            + " payment"
            + _opt(k.get("date"), " {} tak")
            + " due hai"
        )
    return (
        "آپ کی"
        + _opt(k.get("amount"), " {} کی")
        + " ادائیگی"
        + _opt(k.get("date"), " {} تک")
        + " واجب الادا ہے"
    )


def _clause_delivery(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your order"
            + _opt(k.get("order"), " {}")
            + " will be delivered"
            + _opt(k.get("date"), " on {}")
            + _opt(k.get("time"), " by {}")
            + _opt(k.get("location"), " to {}")
        )
    if reg == "ru":
        return (
            "aap ka order"
            + _opt(k.get("order"), " {}")
            + _opt(k.get("date"), " {} ko")
            + _opt(k.get("time"), " {} tak")
            + _opt(k.get("location"), " {} par")
            + " deliver hoga"
        )
    return (
        "آپ کا آرڈر"
        + _opt(k.get("order"), " {}")
        + _opt(k.get("date"), " {} کو")
        + _opt(k.get("time"), " {} تک")
        + _opt(k.get("location"), " {} پر")
        + " پہنچا دیا جائے گا"
    )


def _clause_renewal(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return (
            "your subscription expires"
            + _opt(k.get("date"), " on {}")
            + (_opt(k.get("amount"), " and the renewal is {}") or " soon")
        )
    if reg == "ru":
        return (
            "aap ki subscription"
            + (_opt(k.get("date"), " {} ko") or " jald")
            + " expire ho rahi hai"
            + _opt(k.get("amount"), ", renewal {} ki hai")
        )
    return (
        "آپ کی سبسکرپشن"
        + (_opt(k.get("date"), " {} کو") or " جلد")
        + " ختم ہو رہی ہے"
        + _opt(k.get("amount"), "، تجدید کی رقم {} ہے")
    )


def _clause_survey(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return "we'd love your feedback on your recent experience with " + (org or "us")
    if reg == "ru":
        return (
            "hum aap se "
            + (f"{org} ki" if org else "hamari")
            + " service ke baare mein raaye lena chahte hain"
        )
    return "ہم " + (f"{org} کی" if org else "ہماری") + " سروس کے بارے میں آپ کی رائے لینا چاہتے ہیں"


def _clause_generic(k: Mapping[str, str], org: str | None, reg: Register) -> str:
    if reg == "en":
        return "we have an update regarding your account" + _opt(org, " with {}")
    if reg == "ru":
        return "aap ke" + _opt(org, " {}") + " account ke baare mein ek update hai"
    return "آپ کے" + _opt(org, " {}") + " اکاؤنٹ کے بارے میں ایک اپڈیٹ ہے"


_TOPIC_CLAUSES: Final[Mapping[str, Callable[[Mapping[str, str], str | None, Register], str]]] = {
    "appointment": _clause_appointment,
    "payment": _clause_payment,
    "delivery": _clause_delivery,
    "renewal": _clause_renewal,
    "survey": _clause_survey,
    "generic": _clause_generic,
}
_TOPIC_USES: Final[Mapping[str, frozenset[str]]] = {
    "appointment": frozenset({"date", "time", "doctor", "location"}),
    "payment": frozenset({"amount", "date"}),
    "delivery": frozenset({"order", "date", "time", "location"}),
    "renewal": frozenset({"date", "amount"}),
    "survey": frozenset(),
    "generic": frozenset(),
}
_LEFTOVER: Final[Mapping[Register, Mapping[str, str]]] = {
    "en": {
        "date": "the date is {}",
        "time": "the time is {}",
        "amount": "the amount is {}",
        "doctor": "the doctor is {}",
        "order": "the order is {}",
        "location": "the place is {}",
    },
    "ru": {
        "date": "tareekh {} hai",
        "time": "waqt {} hai",
        "amount": "raqam {} hai",
        "doctor": "doctor {} hain",
        "order": "order {} hai",
        "location": "jagah {} hai",
    },
    "ur": {
        "date": "تاریخ {} ہے",
        "time": "وقت {} ہے",
        "amount": "رقم {} ہے",
        "doctor": "ڈاکٹر {} ہیں",
        "order": "آرڈر {} ہے",
        "location": "جگہ {} ہے",
    },
}
_OTHER: Final[Mapping[Register, str]] = {
    "en": "your {label} is {value}",
    "ru": "aap ka {label} {value} hai",
    "ur": "آپ کا {label} {value} ہے",
}


def _echo(scene: _Scene, register: Register) -> str:
    """The caller's own record of the key facts, e.g. "12 March at 4 PM"."""
    uses = _TOPIC_USES[scene.topic] or frozenset({"date", "time", "amount"})
    order = ("amount", "date", "time")
    values = [scene.record[k].shown(register) for k in order if k in uses and k in scene.record]
    if len(values) == 2 and not ("amount" in uses and "amount" in scene.record):  # date, time
        return values[0] + {"en": " at ", "ru": " ko ", "ur": " کو "}[register] + values[1]
    return ("، " if register == "ur" else ", ").join(values)


# --------------------------------------------------------------------------------------------
# Planning a conversation


_P_FOLLOW: Final = 0.9  # an instructed behaviour happens
_P_CONFIRM_VAGUE: Final = 0.65  # a vague prompt's "confirm" still happens
_P_CONFIRM_UNASKED: Final = 0.1
_P_CLOSE_UNASKED: Final = 0.35
_P_APOLOGISE_UNASKED: Final = 0.25
_P_SCRIPT_DRIFT: Final = 0.08  # a Nastaliq agent slips into Roman Urdu after two turns
_P_CALLER_ENDS: Final = 0.6  # the caller says the last word after the agent's close
_FIELD_RE: Final = re.compile(r"\{(\w+)\}")
_SENTENCE_START_RE: Final = re.compile(r"(?:^|(?<=[.!?] ))[a-z]")


class _Talk:
    """One conversation in the making: picks phrases and keeps the turns alternating."""

    def __init__(self, scene: _Scene, rng: random.Random) -> None:
        self.scene = scene
        self.rng = rng
        self.agent_register: Register = scene.register
        self.caller_register: str = "mix" if "code_switch" in scene.traits else scene.register
        self.lines: list[tuple[Role, str]] = []
        self.agent_turns = 0
        self.use_name = scene.name is not None and (
            scene.greeting_names or rng.random() < (0.95 if scene.name_referenced else 0.5)
        )
        self.drift = scene.register == "ur" and rng.random() < _P_SCRIPT_DRIFT
        self.when_index = rng.randrange(1000)
        self.details_said = False
        self.asked_confirm = False
        self.asked_identity = False
        self.asked_how = False
        self.softened = False
        self.finished = False

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def slots(self, register: str, side: Role) -> dict[str, str]:
        reg = _plain(register)
        scene = self.scene
        slots = dict(_GENDER_WORDS[scene.gender])
        if side == "agent":
            name = scene.name.shown(reg) if scene.name is not None and self.use_name else ""
        else:
            fact = scene.record.get("name")
            name = fact.shown(reg) if fact is not None else ""
        agent, org = scene.agent_name or "", scene.org or ""
        if reg == "ur":
            agent, org = transliterate(agent), transliterate(org)
        amount = scene.record.get("amount")
        when = _WHEN.get(register) or _WHEN[reg]
        slots.update(
            name=name,
            agent=agent,
            org=org,
            details=_details(scene, reg),
            echo=_echo(scene, reg),
            when=when[self.when_index % len(when)],
            amount=amount.shown(reg) if amount is not None else "",
            label="",
            token="",
        )
        return slots

    def phrase(self, side: Role, bank: _Bank, **extra: str) -> str:
        """A variant from ``bank`` in the side's register, preferring ones whose slots are filled."""
        if side == "agent":
            if self.drift and self.agent_turns >= 2:
                self.agent_register = "ru"
            register: str = self.agent_register
        else:
            register = self.caller_register
        slots = self.slots(register, side)
        slots.update(extra)
        options = bank.get(register) or bank[_plain(register)]
        filled = [o for o in options if all(slots.get(f) for f in _FIELD_RE.findall(o))]
        return self.rng.choice(filled or options).format_map(slots)

    def agent(self, kind: str, **extra: str) -> str:
        return self.phrase("agent", _AGENT[kind], **extra)

    def caller(self, kind: str, **extra: str) -> str:
        return self.phrase("caller", _CALLER[kind], **extra)

    def confirm_question(self) -> str:
        return self.phrase("agent", _CONFIRM_Q.get(self.scene.topic, _CONFIRM_Q["generic"]))

    def say(self, role: Role, *parts: str) -> None:
        text = " ".join(" ".join(parts).split())
        text = _SENTENCE_START_RE.sub(lambda m: m.group(0).upper(), text)
        if not text:
            return
        if role == "agent":
            self.agent_turns += 1
        if self.lines and self.lines[-1][0] == role:
            self.lines[-1] = (role, self.lines[-1][1] + " " + text)
        else:
            self.lines.append((role, text))


def _plain(register: str) -> Register:
    if register == "en":
        return "en"
    return "ur" if register == "ur" else "ru"


def plan_conversation(setup: ConversationSetup, max_turns: int = 16) -> list[Utterance]:
    """The whole scripted conversation for ``setup``: 2..``max_turns`` alternating turns."""
    if max_turns < 2:
        raise ValueError(f"max_turns must be at least 2; got {max_turns}")
    talk = _Talk(_scene(setup), random.Random(setup.seed))
    _play(talk)
    lines = talk.lines[:max_turns]
    while len(lines) < 2:  # the flows always give two or more; the contract is kept regardless
        role: Role = "caller" if lines and lines[-1][0] == "agent" else "agent"
        lines.append((role, talk.caller("bye") if role == "caller" else talk.agent("close")))
    return [Utterance(role, text) for role, text in lines]


def _play(talk: _Talk) -> None:
    traits = talk.scene.traits
    purpose_said = _open(talk)
    if "wrong_person" in traits:
        _wrong_person(talk)
        return
    if "busy" in traits and not purpose_said and talk.chance(0.7):
        _busy(talk)
        return
    if "dnc" in traits and talk.chance(0.6):
        _dnc(talk)
        return
    if "hostile" in traits:
        if not _hostile(talk):
            return
    elif "callback" in traits:
        _callback(talk)
        return
    else:
        _first_reply(talk)
    if not purpose_said:
        _state_purpose(talk)
    if "busy" in traits:
        _busy(talk)
    elif "dnc" in traits:
        _dnc(talk)
    else:
        _modifiers(talk)
        _answer_and_close(talk)


def _open(talk: _Talk) -> bool:
    """The caller's hello (unless the agent greets first) and the agent's opening line.

    Returns whether the opening already stated the call's purpose.
    """
    scene = talk.scene
    if not scene.greeting_on:
        talk.say("caller", talk.caller("hello_cold" if scene.cold else "hello"))
    if scene.literal_greeting is not None:
        literal = scene.literal_greeting
        talk.say("agent", literal)
        said = any(
            f.token in literal or (f.value and f.value in literal) for f in scene.details_facts
        )
        talk.details_said = said
        return said
    reg = talk.agent_register
    salutation = talk.agent("salutation")
    address = ""
    if talk.use_name and scene.name is not None:
        address = " " + scene.name.shown(reg) + {"en": "", "ru": " ji", "ur": " جی"}[reg]
    if scene.agent_name and scene.org:
        intro = talk.agent("intro_both")
    elif scene.org:
        intro = talk.agent("intro_org")
    elif scene.agent_name:
        intro = talk.agent("intro_agent")
    else:
        intro = talk.agent("intro_none")
    opener = f"{salutation}{address}{'،' if reg == 'ur' else ','} {intro}"
    if scene.greeting_purpose:
        talk.say("agent", opener, talk.agent("purpose"))
        talk.details_said = True
        _maybe_confirm(talk)
        return True
    if scene.name is not None and talk.chance(0.85 if "verify" in scene.features else 0.4):
        name = scene.name.shown(reg)
        talk.say("agent", opener, talk.agent("identity", name=name))
        talk.asked_identity = True
    elif talk.chance(0.4):
        talk.say("agent", opener, talk.agent("how_are_you"))
        talk.asked_how = True
    else:
        talk.say("agent", opener)
    return False


def _maybe_confirm(talk: _Talk) -> None:
    scene = talk.scene
    if "confirm" in scene.features:
        asks = talk.chance(_P_CONFIRM_VAGUE if scene.vague else _P_FOLLOW)
    else:
        asks = talk.chance(_P_CONFIRM_UNASKED)
    if asks:
        talk.say("agent", talk.confirm_question())
        talk.asked_confirm = True


def _handles_objections(talk: _Talk) -> bool:
    return talk.chance(_P_FOLLOW if "objections" in talk.scene.features else _P_APOLOGISE_UNASKED)


def _closes(talk: _Talk) -> bool:
    return talk.chance(_P_FOLLOW if "close" in talk.scene.features else _P_CLOSE_UNASKED)


def _first_reply(talk: _Talk) -> None:
    scene = talk.scene
    if talk.asked_identity and "name" in scene.record:
        talk.say("caller", talk.caller("identity_yes"))
    elif talk.asked_how and not scene.cold:
        talk.say("caller", talk.caller("fine"))
    elif scene.cold:
        talk.say("caller", talk.caller("who"))
        if talk.chance(0.5):
            talk.say("agent", talk.agent("explain_who"))
    elif scene.aware:
        talk.say("caller", talk.caller("aware"))
    else:
        talk.say("caller", talk.caller("ack_open"))


def _state_purpose(talk: _Talk) -> None:
    if talk.scene.vague and talk.chance(0.5):
        talk.say("agent", talk.agent("vague_purpose"))
        talk.say("caller", talk.caller("what_about"))
    talk.say("agent", talk.agent("purpose"))
    talk.details_said = True
    _maybe_confirm(talk)


def _wrong_person(talk: _Talk) -> None:
    name = talk.scene.name
    if name is not None:
        talk.say("caller", talk.caller("wrong", name=name.shown(_plain(talk.caller_register))))
    else:
        talk.say("caller", talk.caller("wrong_anon"))
    if "objections" in talk.scene.features or talk.chance(0.85):
        talk.say("agent", talk.agent("wrong_apology"))
        if talk.chance(0.3):
            talk.say("caller", talk.caller("bye"))
        return
    talk.say(
        "agent", talk.agent("wrong_message", name=name.shown(talk.agent_register) if name else "")
    )
    talk.say("caller", talk.caller("wrong_final"))


def _busy(talk: _Talk) -> None:
    """Busy callers hang up early; the call always ends on the caller's line."""
    asks_later = "callback" in talk.scene.traits
    talk.say("caller", talk.caller("busy_when" if asks_later else "busy"))
    if talk.chance(0.5):
        return  # hung up at once
    if asks_later:
        talk.say("agent", talk.agent("callback_agree"))
        talk.say("caller", talk.caller("bye"))
        return
    if "objections" not in talk.scene.features and talk.chance(0.5):
        talk.say("agent", talk.agent("push"))
    else:
        talk.say("agent", talk.agent("busy_later"))
    talk.say("caller", talk.caller("busy_final"))


def _dnc(talk: _Talk) -> None:
    talk.say("caller", talk.caller("dnc"))
    if _handles_objections(talk):
        talk.say("agent", talk.agent("apologise_remove"))
        if talk.chance(0.5):
            talk.say("caller", talk.caller("bye"))
        return
    talk.say("agent", talk.agent("push"))
    talk.say("caller", talk.caller("dnc_final"))


def _hostile(talk: _Talk) -> bool:
    """A hostile caller objects. Returns whether the call goes on to its purpose."""
    talk.say("caller", talk.caller("object"))
    if _handles_objections(talk):
        talk.say("agent", talk.agent("apologise_end"))
        if talk.chance(0.3):
            talk.say("caller", talk.caller("soften"))
            talk.softened = True
            return True
        if talk.chance(0.5):
            talk.say("caller", talk.caller("bye"))
        return False
    talk.say("agent", talk.agent("push"))
    talk.details_said = True
    talk.say("caller", talk.caller("stop"))
    if talk.chance(0.25):
        talk.say("agent", talk.agent("apologise_remove"))
    return False


def _callback(talk: _Talk) -> None:
    talk.say("caller", talk.caller("callback"))
    if talk.chance(0.85 if "callback" in talk.scene.features else 0.6):
        close = talk.agent("close") if _closes(talk) else ""
        talk.say("agent", talk.agent("callback_agree"), close)
        if not close or talk.chance(_P_CALLER_ENDS):
            talk.say("caller", talk.caller("bye"))
        return
    talk.say("agent", talk.agent("callback_insist"))
    talk.details_said = True
    talk.say("caller", talk.caller("callback_final"))


def _modifiers(talk: _Talk) -> None:
    """Confused, distracted and price-sensitive callers interrupt before answering."""
    traits = talk.scene.traits
    if "confused" in traits:
        again = talk.confirm_question() if talk.asked_confirm else ""
        talk.say("caller", talk.caller("repeat"))
        talk.say("agent", talk.agent("repeat"), again)
        if talk.chance(0.4):
            talk.say("caller", talk.caller("repeat_slow"))
            talk.say("agent", talk.agent("repeat_slow"))
    if "distracted" in traits and talk.chance(0.8):
        again = talk.confirm_question() if talk.asked_confirm else ""
        talk.say("caller", talk.caller("noise"))
        talk.say("agent", talk.agent("repeat"), again)
    if "price" in traits:
        talk.say("caller", talk.caller("price"))
        amount = talk.agent("price_amount") if "amount" in talk.scene.record else ""
        talk.say("agent", amount, talk.agent("price_none"))
        if talk.chance(0.4):
            talk.say("caller", talk.caller("price_balk"))
            talk.finished = True


def _answer_and_close(talk: _Talk) -> None:
    scene = talk.scene
    if talk.finished:
        if _closes(talk):
            talk.say("agent", talk.agent("close"))
        return
    said = " ".join(text for role, text in talk.lines if role == "agent")
    unresolved = [f for f in scene.details_facts if not f.resolved and f.token in said]
    if unresolved and talk.details_said and talk.chance(0.75):
        fact = unresolved[0]
        reg = _plain(talk.caller_register)
        label = _KIND_LABEL[reg].get(fact.kind) or fact.label(reg)
        talk.say("caller", talk.caller("token", label=label, token=fact.token))
        talk.say("agent", talk.agent("token_sorry"))
        talk.say("caller", talk.caller("bye"))
        return
    confirmed = False
    if talk.asked_confirm:
        if talk.chance(0.7 if talk.softened else 0.92):
            has_echo = bool(_echo(scene, _plain(talk.caller_register)))
            echo = talk.caller("echo") if has_echo and talk.chance(0.7) else ""
            talk.say("caller", talk.caller("yes"), echo)
            confirmed = True
        else:
            talk.say("caller", talk.caller("unsure"))
    elif talk.chance(0.25):
        question, answer = _TOPIC_QA[scene.topic]
        talk.say("caller", talk.phrase("caller", question))
        talk.say("agent", talk.phrase("agent", answer))
        talk.say("caller", talk.caller("ack"))
    else:
        talk.say("caller", talk.caller("ack"))

    noted = talk.agent("noted") if confirmed and talk.chance(0.8) else ""
    if _closes(talk):
        talk.say("agent", noted, talk.agent("close"))
        if talk.chance(_P_CALLER_ENDS):
            talk.say("caller", talk.caller("bye"))
    elif talk.chance(0.85):
        talk.say("agent", noted)
        talk.say("caller", talk.caller("bye" if noted else "bye_short"))
    else:
        talk.say("agent", noted, talk.agent("anything_else" if talk.chance(0.5) else "plain_end"))
        if talk.chance(0.8):
            talk.say("caller", talk.caller("no_thanks"))


_KIND_LABEL: Final[Mapping[Register, Mapping[str, str]]] = {
    "en": {
        "date": "date",
        "time": "time",
        "amount": "amount",
        "doctor": "doctor",
        "order": "order",
    },
    "ru": {"date": "date", "time": "time", "amount": "raqam", "doctor": "doctor", "order": "order"},
    "ur": {"date": "تاریخ", "time": "وقت", "amount": "رقم", "doctor": "ڈاکٹر", "order": "آرڈر"},
}
