"""Text helpers: ``{{token}}`` substitution, negation-aware keyword matching, the register
(English, Roman Urdu, Urdu script) a prompt asks for, and Roman-to-Urdu transliteration."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from ._data import load
from ._types import Register

__all__ = [
    "TOKEN_RE",
    "arabic_share",
    "detect_register",
    "lookup_variable",
    "mentions",
    "substitute_variables",
    "transliterate",
]

TOKEN_RE: Final = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
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

    return TOKEN_RE.sub(one, text)


def arabic_share(text: str) -> float:
    """Arabic-script letters over all letters (0 when there are none)."""
    arabic = len(_ARABIC_LETTER_RE.findall(text))
    latin = len(_LATIN_LETTER_RE.findall(text))
    return arabic / (arabic + latin) if arabic + latin else 0.0


@functools.lru_cache(maxsize=256)
def _words_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(patterns) + r")(?!\w)", re.IGNORECASE)


def mentions(text: str, patterns: tuple[str, ...]) -> bool:
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
    about_urdu = mentions(instructions, _URDU_WORDS) or arabic_share(instructions) >= 0.3
    if not about_urdu:
        return "en"
    return "ur" if mentions(instructions, _NASTALIQ_WORDS) else "ru"


_WORD_RE: Final = re.compile(r"\{\{[^{}]*\}\}|[A-Za-z]+|[^A-Za-z{]+|\{")
_CURRENCY_RE: Final = re.compile(r"\b(?:rs\.?|pkr)\s*(\d[\d,.]*)", re.IGNORECASE)
_TEXT_COMMA_RE: Final = re.compile(r",(?!\d)")
_SPECIAL_INITIAL: Final = frozenset({"aa", "ee", "oo", "ai", "ou"})


def _transliterate_word(word: str) -> str:
    urdu = load("urdu")
    lowered = word.lower()
    known: str | None = urdu["urdu_words"].get(lowered)
    if known is not None:
        return known
    out: list[str] = []
    i = 0
    while i < len(lowered):
        pair = lowered[i : i + 2]
        if pair in urdu["digraphs"] and not (i == 0 and pair in _SPECIAL_INITIAL):
            out.append(urdu["digraphs"][pair])
            i += 2
            continue
        c = lowered[i]
        if c in urdu["consonants"]:
            out.append(urdu["consonants"][c])
        elif i == 0:
            out.append(urdu["vowel_initial"].get(c, ""))
        elif i == len(lowered) - 1:
            out.append(urdu["vowel_final"].get(c, ""))
        else:
            out.append(urdu["vowel_medial"].get(c, ""))
        i += 1
    return "".join(out) or word


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
