"""Vectorised text helpers over Arrow string arrays (RE2 regexes via ``pyarrow.compute``).

Normalisation (scorecards/README.md): NFKC; case folded unless case-sensitive; whitespace runs
collapsed; Arabic-script variants unified for Urdu (``ي``/``ى`` -> ``ی``, ``ك`` -> ``ک``);
tatweel and diacritics removed; Eastern Arabic and Urdu digits read as ASCII digits.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "ARABIC_LETTER",
    "LATIN_LETTER",
    "PLACEHOLDER_RE2",
    "normalise",
    "normalise_one",
]

#: one Arabic-script letter (not a digit, mark, tatweel or punctuation)
ARABIC_LETTER: Final = (
    "[\u0621-\u063f\u0641-\u064a\u066e-\u066f\u0671-\u06d3\u06d5\u06ee-\u06ef\u06fa-\u06fc"
    "\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc]"
)
#: one Latin letter (ASCII and Latin-1/Extended-A/B)
LATIN_LETTER: Final = "[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]"
#: ``{{ token }}`` or ``{identifier}``
PLACEHOLDER_RE2: Final = r"(?P<m>\{\{[^{}]*\}\}|\{[A-Za-z_][A-Za-z0-9_.]*\})"

_VARIANTS: Final = {"ي": "ی", "ى": "ی", "ك": "ک", "ۀ": "ۂ"}
_DIGITS: Final = {
    **{chr(0x0660 + i): str(i) for i in range(10)},
    **{chr(0x06F0 + i): str(i) for i in range(10)},
}
_DROP_RE2: Final = "[\u0640\u064b-\u065f\u0670\u06d6-\u06ed]"
_SPECIAL_RE2: Final = "[" + "".join(_VARIANTS) + "\u0660-\u0669\u06f0-\u06f9" + _DROP_RE2[1:]
_FOLD: Final = str.maketrans({**_VARIANTS, **_DIGITS, "\u0640": None})
_MARKS_RE: Final = re.compile(_DROP_RE2)
_SPACE_RE: Final = re.compile(r"\s+")


def normalise(texts: pa.Array | pa.ChunkedArray, case_sensitive: bool = False) -> pa.Array:
    """Normalise every string of ``texts`` (see the module docstring); nulls stay null."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    out = pc.utf8_normalize(texts, "NFKC")
    if not case_sensitive:
        out = pc.utf8_lower(out)
    special = pc.fill_null(pc.match_substring_regex(out, _SPECIAL_RE2), False)
    if pc.any(special).as_py():  # variant letters, digits and marks: only where present
        part = pc.filter(out, special)
        for old, new in {**_VARIANTS, **_DIGITS}.items():
            part = pc.replace_substring(part, old, new)
        part = pc.replace_substring_regex(part, _DROP_RE2, "")
        out = pc.replace_with_mask(out, special, part)
    spaced = pc.fill_null(pc.match_substring_regex(out, r"\s\s|[\t\n\r\f\v]"), False)
    if pc.any(spaced).as_py():  # runs of whitespace: only where present
        part = pc.replace_substring_regex(pc.filter(out, spaced), r"\s+", " ")
        out = pc.replace_with_mask(out, spaced, part)
    return pc.utf8_trim_whitespace(out)


def normalise_one(text: str, case_sensitive: bool = False) -> str:
    """:func:`normalise` for one string (needles, variable values)."""
    out = unicodedata.normalize("NFKC", text)
    if not case_sensitive:
        out = out.lower()  # utf8_lower, as the vectorised path does
    out = _MARKS_RE.sub("", out.translate(_FOLD))
    return _SPACE_RE.sub(" ", out).strip()
