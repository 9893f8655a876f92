"""evalkit's static report page: one self-contained HTML file, nothing loaded from elsewhere.

Urdu in Arabic script is set in Nastaliq: the font stack asks for "Noto Nastaliq Urdu", Jameel
Noori Nastaleeq and Urdu Typesetting, with Naskh fallbacks. When the page holds Arabic-script
text, the Noto Nastaliq Urdu file evalkit ships is embedded in the page (no system font
involved), so the report renders in Nastaliq on any machine that opens it.
"""

from __future__ import annotations

import base64
from pathlib import Path

from markupsafe import Markup

from .._util import render_html, stylesheet
from ..data import nastaliq_font_path
from ._fonts import bundled_nastaliq_bytes, has_arabic

__all__ = ["find_nastaliq_font", "report_page"]


def find_nastaliq_font() -> Path | None:
    """The Nastaliq font file evalkit ships (Noto Nastaliq Urdu), or None if it is missing."""
    path = nastaliq_font_path()
    return path if path.is_file() else None


def _font_src(body: str) -> str | None:
    """The bundled font as a data URI when the page holds Arabic script, else None."""
    if not has_arabic(body):
        return None
    font = bundled_nastaliq_bytes()
    if font is None:
        return None
    return f"data:font/ttf;base64,{base64.b64encode(font).decode('ascii')}"


def report_page(title: str, body: str, *, failed: bool = False) -> str:
    """A whole HTML page around ``body`` (already HTML), with evalkit's stylesheet and fonts
    (the template ``evalkit/templates/page.html``)."""
    return render_html(
        "page.html",
        title=title,
        body=Markup(body),
        css=stylesheet(),
        font_src=_font_src(body),
        failed=failed,
        footer=True,
    )
