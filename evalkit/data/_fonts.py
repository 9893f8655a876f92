"""The fonts evalkit ships (SIL OFL 1.1, licence ``OFL.txt`` beside them): Noto Nastaliq Urdu
for Urdu, and a Latin subset of Noto Sans (its family renamed) for the Latin words of a label
that also holds Urdu.

Plots, reports and the viewer use these files, never a system font or matplotlib's font cache,
so Urdu renders the same on a machine that has no Urdu font at all.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["LATIN_FAMILY", "NASTALIQ_FAMILY", "latin_font_path", "nastaliq_font_path"]

#: The family name inside the shipped Nastaliq file.
NASTALIQ_FAMILY = "Noto Nastaliq Urdu"

#: The family name inside the shipped Latin file (renamed, so no installed Noto Sans is taken).
LATIN_FAMILY = "Noto Sans evalkit Latin"

_NASTALIQ_FILE = "NotoNastaliqUrdu-Regular.ttf"
_LATIN_FILE = "NotoSansLatin-Regular.ttf"


def _font(name: str) -> Path:
    return Path(str(files(__package__ or "evalkit.data") / "fonts" / name))


def nastaliq_font_path() -> Path:
    """The shipped Noto Nastaliq Urdu file (its OFL licence is ``OFL.txt`` in the same folder)."""
    return _font(_NASTALIQ_FILE)


def latin_font_path() -> Path:
    """The shipped Latin subset of Noto Sans, family :data:`LATIN_FAMILY` (no Arabic letters)."""
    return _font(_LATIN_FILE)
