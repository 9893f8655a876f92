"""Arabic script: how much of a text is in it, and which font draws it in plots.

evalkit ships Noto Nastaliq Urdu (:func:`evalkit.data.nastaliq_font_path`) and a Latin subset
of Noto Sans (:func:`evalkit.data.latin_font_path`) and registers those files with matplotlib
itself, ahead of any installed font of the same family (:func:`bundled_nastaliq`,
:func:`bundled_latin`), so plots never depend on system fonts or on matplotlib's font cache. Matplotlib draws a missing glyph as an empty box, so plots use
Arabic-script labels only when :func:`find_arabic_font` has a font with the Urdu letters (the
shipped one unless it cannot load, which is a warning); otherwise labels fall back to Latin
stand-ins (:func:`plot_label`, :func:`without_arabic`). Matplotlib 3.11 shapes text with
libraqm (joining, Nastaliq's contextual forms, bidi), so a label is drawn with
:func:`label_families`: Urdu in the Nastaliq font, Latin in a sans face without Arabic letters
(the shipped Latin file, so no Urdu letter is taken from a Naskh-style fallback), and :func:`directed` gives every line
of a label the label's own direction. HTML uses :data:`NASTALIQ_FONT_STACK` and lets the
browser pick.
"""

from __future__ import annotations

import logging
import re
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..data import LATIN_FAMILY, NASTALIQ_FAMILY, latin_font_path, nastaliq_font_path

__all__ = [
    "ARABIC_FONT_PREFERENCE",
    "NASTALIQ_FONT_STACK",
    "ArabicFont",
    "arabic_runs",
    "arabic_share",
    "bundled_latin",
    "bundled_nastaliq",
    "bundled_nastaliq_bytes",
    "directed",
    "find_arabic_font",
    "has_arabic",
    "is_arabic_script",
    "label_families",
    "plot_label",
    "without_arabic",
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

_ARABIC_CLASS = "".join(f"\\u{low:04x}-\\u{high:04x}" for low, high in _ARABIC_RANGES)
#: A run of Arabic-script words, with the spaces and punctuation between them.
_ARABIC_RUN = re.compile(f"[{_ARABIC_CLASS}]+(?:[\\s/،؛.,:\\-]+[{_ARABIC_CLASS}]+)*")

#: Unicode direction marks: the first strong character of a line sets its direction.
LRM, RLM = "\u200e", "\u200f"


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


#: What a plot or report loses when a shipped font cannot load.
_NASTALIQ_LOSS = "plots draw Urdu as Latin stand-ins and reports cannot embed the font"
_LATIN_LOSS = "plots take the Latin words of a label holding Urdu from the Urdu font"


@cache
def _unloadable_once(path: str, reason: str, loss: str = _NASTALIQ_LOSS) -> None:
    """Warn once per process (and per reason) that a shipped font cannot be used."""
    message = f"evalkit's font {path} cannot be loaded ({reason}): {loss}; reinstall evalkit"
    logger.warning("%s", message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _registered_first(path: Path, family: str) -> None:
    """Make matplotlib take the file at ``path`` for ``family`` (the family inside it):
    registered by file, not through the font cache, ahead of every other font of that family
    (an installed copy of another version, say). Matplotlib's lookup takes the first of equally
    good matches."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    manager = font_manager.fontManager
    first = next((e for e in manager.ttflist if e.name == family), None)
    if first is not None and first.fname == str(path):
        return
    manager.ttflist.insert(0, font_manager.ttfFontProperty(FT2Font(str(path))))
    manager.addfont(str(path))  # also empties matplotlib's lookup cache


def _bundled(path: Path, family: str, loss: str) -> bool:
    """Register a shipped font file; False, with a warning (once per process) naming ``loss``,
    if it cannot load."""
    try:
        _registered_first(path, family)
    except (OSError, RuntimeError, ValueError) as exc:
        _unloadable_once(str(path), str(exc) or type(exc).__name__, loss)
        return False
    return True


def bundled_nastaliq() -> ArabicFont | None:
    """The Nastaliq font shipped with evalkit, registered with matplotlib from the package file.

    Registration is by file (``fontManager.addfont``) and ahead of any installed font of the
    same family, so neither system fonts nor matplotlib's font cache are involved. None, with a
    warning (once per process), if the file cannot load.
    """
    path = nastaliq_font_path()
    if not _bundled(path, NASTALIQ_FAMILY, _NASTALIQ_LOSS):
        return None
    if not _covers_urdu(str(path)):
        _unloadable_once(str(path), "the file lacks the Urdu letters")
        return None
    return ArabicFont(NASTALIQ_FAMILY, path)


def bundled_latin() -> str | None:
    """The family of the Latin font shipped with evalkit (no Arabic letters), registered with
    matplotlib from the package file; None, with a warning (once per process), if it cannot
    load."""
    path = latin_font_path()
    if not _bundled(path, LATIN_FAMILY, _LATIN_LOSS):
        return None
    return LATIN_FAMILY


def bundled_nastaliq_bytes() -> bytes | None:
    """The shipped Nastaliq font file's bytes (for reports and the viewer), or None with a
    warning (once per process) if it cannot be read."""
    path = nastaliq_font_path()
    try:
        return path.read_bytes()
    except OSError as exc:
        _unloadable_once(str(path), exc.strerror or type(exc).__name__)
        return None


def find_arabic_font(preference: tuple[str, ...] = ARABIC_FONT_PREFERENCE) -> ArabicFont | None:
    """The first family in ``preference`` that draws Urdu: the shipped Nastaliq file for its
    family, else a font matplotlib knows with the Urdu letters."""
    from matplotlib import font_manager

    by_name: dict[str, list[str]] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, []).append(entry.fname)
    for family in preference:
        if family == NASTALIQ_FAMILY:
            shipped = bundled_nastaliq()
            if shipped is not None:
                return shipped
            continue
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


def arabic_runs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of Arabic-script words in ``text`` (spaces and ``/`` inside)."""
    return [match.span() for match in _ARABIC_RUN.finditer(text)]


def without_arabic(text: str, placeholder: str = "…") -> str:
    """``text`` with each Arabic-script run replaced by ``placeholder`` (no font to draw it);
    empty when nothing but punctuation would be left."""
    kept = _ARABIC_RUN.sub(placeholder, text)
    return kept if any(ch.isalpha() for ch in kept) else ""


def _has_arabic_letters(path: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        return ord("ا") in FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return True  # unreadable: never pair it


def label_families(text: str, font: ArabicFont | None) -> list[str] | None:
    """Font families for a plot label holding Arabic script, or None (the default font).

    Mostly Urdu: the Urdu font first (its spacing), Latin from sans-serif. Mostly Latin: the
    shipped Latin face (no Arabic letters) first, so every Urdu letter comes from the Urdu font.
    """
    if font is None or not has_arabic(text):
        return None
    if is_arabic_script(text):
        return [font.family, "sans-serif"]
    partner = bundled_latin()
    return [partner, font.family] if partner else [font.family, "sans-serif"]


def directed(text: str) -> str:
    """``text`` with a direction mark at the start of each line when it holds Arabic script:
    right to left when most letters are Arabic, else left to right (a wrapped line that starts
    with an Urdu word keeps the label's direction)."""
    if not has_arabic(text):
        return text
    mark = RLM if is_arabic_script(text) else LRM
    return "\n".join(mark + line for line in text.split("\n"))
