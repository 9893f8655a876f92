"""Script-neutral "sound skeletons" of words, to find a Roman value spoken in Urdu script.

Independent of the emulator's transliterator: both spellings are reduced to coarse consonant
classes (vowels, ``h``, ``w``/``v``/``y`` and their Urdu letters dropped; repeats collapsed), so
``Ayesha Khan`` and ``عائشہ خان`` both become ``S KN``. A value matches when its words'
skeletons occur as consecutive words of a turn. Short names (one consonant) match loosely.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["find_by_sound", "skeleton"]

_ROMAN_DIGRAPHS: Final = {
    "sh": "S", "kh": "K", "gh": "G", "ch": "C", "th": "T", "ph": "P",
    "bh": "B", "dh": "D", "jh": "J", "ck": "K", "zh": "Z",
}  # fmt: skip
_ROMAN: Final = {
    "b": "B", "c": "K", "d": "D", "f": "P", "g": "G", "j": "J", "k": "K", "l": "L",
    "m": "M", "n": "N", "p": "P", "q": "K", "r": "R", "s": "s", "t": "T", "x": "Ks",
    "z": "Z",
}  # fmt: skip
_URDU: Final = {
    "ب": "B", "پ": "P", "ت": "T", "ٹ": "T", "ط": "T", "ث": "s", "س": "s", "ص": "s",
    "ج": "J", "چ": "C", "خ": "K", "د": "D", "ڈ": "D", "ذ": "Z", "ز": "Z", "ض": "Z",
    "ظ": "Z", "ژ": "Z", "ر": "R", "ڑ": "R", "ش": "S", "غ": "G", "ف": "P", "ق": "K",
    "ک": "K", "ك": "K", "گ": "G", "ل": "L", "م": "M", "ن": "N", "ں": "N",
}  # fmt: skip
_WORD_RE: Final = re.compile(r"[^\W\d_]+|\d+")
_ALIASES: Final = {"dr": "doctor", "mr": "mister", "st": "street", "rs": "rupees"}


def _collapse(classes: list[str]) -> str:
    out: list[str] = []
    for c in classes:
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def skeleton(word: str) -> str:
    """The consonant skeleton of one word, Roman or Urdu script (digits are kept as they are)."""
    if word.isdigit():
        return word
    lowered = word.lower()
    lowered = _ALIASES.get(lowered, lowered)
    classes: list[str] = []
    i = 0
    while i < len(lowered):
        pair = lowered[i : i + 2]
        if pair in _ROMAN_DIGRAPHS:
            classes.append(_ROMAN_DIGRAPHS[pair])
            i += 2
            continue
        c = lowered[i]
        soft_c = c == "c" and lowered[i + 1 : i + 2] in {"e", "i", "y"}
        mapped = "s" if soft_c else None
        mapped = mapped or (_ROMAN.get(c) if c.isascii() else _URDU.get(c))
        if mapped:
            classes.extend(mapped)
        i += 1
    return _collapse(classes)


def _skeletons(text: str) -> list[tuple[str, str]]:
    return [(w, s) for w in _WORD_RE.findall(text) if (s := skeleton(w))]


def find_by_sound(value: str, text: str, partial: bool = False) -> str | None:
    """The words of ``text`` that sound like ``value`` (all its words in a row, or with
    ``partial`` any one word of 3+ letters), or None."""
    wanted = _skeletons(value)
    spoken = _skeletons(text)
    if not wanted or not spoken:
        return None
    sounds = [s for _, s in spoken]
    if partial:
        for word, sound in wanted:
            if len(word) >= 3 and sound in sounds:
                return spoken[sounds.index(sound)][0]
        return None
    n = len(wanted)
    target = [s for _, s in wanted]
    for start in range(len(sounds) - n + 1):
        if sounds[start : start + n] == target:
            return " ".join(w for w, _ in spoken[start : start + n])
    return None


_DROPPED_URDU: Final = "اآأإعیيےئوؤہھحۂۃءى"


def _letters_of(cls: str) -> str:
    return "".join(sorted(ch for ch, c in _URDU.items() if c == cls))


def sound_pattern(value: str, partial: bool = False) -> str | None:
    """An RE2 pattern (group ``m``) matching Urdu-script words that sound like ``value``'s
    words in a row (or, with ``partial``, like any one word of 3+ letters); None if the value
    has no consonants. Runs on normalised text (ASCII digits)."""
    drop = f"[{_DROPPED_URDU}]*"
    words: list[str] = []
    for word, sound in _skeletons(value):
        if partial and (len(word) < 3 or word.isdigit()):
            continue
        if word.isdigit():
            words.append(word)
            continue
        parts = [f"(?:[{_letters_of(c)}]{drop})+" for c in sound]
        words.append(drop + "".join(parts))
    if not words:
        return None
    body = "|".join(words) if partial else r"[^\pL\pN]+".join(words)
    return rf"(?:^|[^\pL\pN])(?P<m>{body})(?:[^\pL\pN]|$)"
