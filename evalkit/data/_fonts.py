"""The Nastaliq font evalkit ships (Noto Nastaliq Urdu, SIL OFL 1.1, licence beside it).

Plots, reports and the viewer use this file, never a system font or matplotlib's font cache,
so Urdu renders the same on a machine that has no Urdu font at all.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["NASTALIQ_FAMILY", "nastaliq_font_path"]

#: The family name inside the shipped font file.
NASTALIQ_FAMILY = "Noto Nastaliq Urdu"

_FONT_FILE = "NotoNastaliqUrdu-Regular.ttf"


def nastaliq_font_path() -> Path:
    """The shipped Noto Nastaliq Urdu file (its OFL licence is ``OFL.txt`` in the same folder)."""
    return Path(str(files(__package__ or "evalkit.data") / "fonts" / _FONT_FILE))
