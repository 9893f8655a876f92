"""Arabic script: how much of a text is in it, and which installed font can draw it in plots.

Matplotlib draws a missing glyph as an empty box, so plots use Arabic-script labels only when
:func:`find_arabic_font` finds a font with the Urdu letters; otherwise labels fall back to
Latin stand-ins (:func:`plot_label`). HTML uses :data:`NASTALIQ_FONT_STACK` and lets the
browser pick.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ARABIC_FONT_PREFERENCE",
    "NASTALIQ_FONT_STACK",
    "ArabicFont",
    "arabic_share",
    "find_arabic_font",
    "has_arabic",
    "is_arabic_script",
    "plot_label",
]

logger = logging.getLogger("evalkit.report")

#: Font families tried for plots, best first (Nastaliq, then Naskh, then any Arabic sans).
ARABIC_FONT_PREFERENCE: tuple[str, ...] = (
    "Noto Nastaliq Urdu",
    "Jameel Noori Nastaleeq",
    "Urdu Typesetting",
    "Noto Naskh Arabic",
    "Noto Sans Arabic",
)

#: The CSS font stack of Urdu turns: Nastaliq first, Naskh fallbacks, then any serif.
NASTALIQ_FONT_STACK = (
    '"Noto Nastaliq Urdu", "Jameel Noori Nastaleeq", "Urdu Typesetting", "Noto Naskh Arabic", serif'
)

#: Code point ranges of the Arabic script (Arabic, Supplement, Extended-A, Presentation Forms).
_ARABIC_RANGES: tuple[tuple[int, int], ...] = (
    (0x0600, 0x06FF),
    (0x0750, 0x077F),
    (0x08A0, 0x08FF),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFF),
)

#: Letters a font must have to draw Urdu: ٹ ڈ ڑ ں ہ ھ ی ے گ ک پ چ.
_URDU_LETTERS = "ٹڈڑںہھیےگکپچ"


def _is_arabic_char(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _ARABIC_RANGES)


def arabic_share(text: str) -> float:
    """The share of ``text``'s letters that are in Arabic script (0 when it has no letters)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 0.0
    return sum(_is_arabic_char(ch) for ch in letters) / len(letters)


def is_arabic_script(text: str, threshold: float = 0.5) -> bool:
    """True when at least ``threshold`` of ``text``'s letters are Arabic script."""
    share = arabic_share(text)
    return share > 0 and share >= threshold


def has_arabic(text: str) -> bool:
    """True when ``text`` has any Arabic-script character."""
    return any(_is_arabic_char(ch) for ch in text)


@dataclass(frozen=True)
class ArabicFont:
    """An installed font that draws Urdu: its family name and file."""

    family: str
    path: Path


def _covers_urdu(path: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        charmap = FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return False
    return all(ord(ch) in charmap for ch in _URDU_LETTERS)


def find_arabic_font(preference: tuple[str, ...] = ARABIC_FONT_PREFERENCE) -> ArabicFont | None:
    """The first family in ``preference`` that matplotlib knows and that has the Urdu letters."""
    from matplotlib import font_manager

    by_name: dict[str, list[str]] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, []).append(entry.fname)
    for family in preference:
        for fname in sorted(by_name.get(family, ()), key=lambda f: ("bold" in f.lower(), f)):
            if _covers_urdu(fname):
                return ArabicFont(family, Path(fname))
    logger.debug("no font with Urdu letters among %s; plots use Latin labels", preference)
    return None


def plot_label(text: str, fallback: str, font: ArabicFont | None) -> str:
    """``text`` if a plot can draw it, else ``fallback`` (no Arabic glyphs without a font)."""
    if font is None and has_arabic(text):
        return fallback
    return text
