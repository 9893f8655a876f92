"""evalkit's static report page: one self-contained HTML file, nothing loaded from elsewhere.

Urdu in Arabic script is set in Nastaliq: the font stack asks for "Noto Nastaliq Urdu", Jameel
Noori Nastaleeq and Urdu Typesetting, with Naskh fallbacks. When the page holds Arabic-script
text, the Noto Nastaliq Urdu file evalkit ships is embedded in the page (no system font
involved), so the report renders in Nastaliq on any machine that opens it.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Final

from ..data import nastaliq_font_path
from ._fonts import NASTALIQ_FONT_STACK, bundled_nastaliq_bytes, has_arabic
from ._transcript_html import REPORT_CSS

__all__ = ["PAGE_CSS", "find_nastaliq_font", "report_page"]

PAGE_CSS: Final = f"""
:root {{ color-scheme: light; }}
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  margin: 0 auto; max-width: 1080px; padding: 24px 28px 64px; color: #1f2328;
  line-height: 1.5; background: #fff; }}
h1 {{ font-size: 1.6rem; margin: 0 0 .4rem; }}
h2 {{ font-size: 1.25rem; margin: 2rem 0 .6rem; border-bottom: 1px solid #d0d7de;
  padding-bottom: .3rem; }}
h3 {{ font-size: 1.05rem; margin: 1.4rem 0 .4rem; }}
img {{ max-width: 100%; height: auto; }}
table {{ border-collapse: collapse; margin: .6rem 0 1rem; font-size: .88rem; }}
th, td {{ border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f6f8fa; }}
tbody tr:nth-child(odd) {{ background: #fbfcfd; }}
pre {{ white-space: pre-wrap; background: #f6f8fa; padding: 8px; border-radius: 6px;
  font-size: .85rem; overflow-x: auto; }}
.output_error pre, .evalkit-failed {{ background: #fff1f0; border: 1px solid #ffccc7; }}
.evalkit-failed {{ padding: 10px 14px; border-radius: 6px; margin-bottom: 1rem; }}
:lang(ur), [dir="rtl"] {{ font-family: {NASTALIQ_FONT_STACK}; line-height: 2.3;
  text-align: right; }}
.evalkit-footer {{ margin-top: 3rem; color: #57606a; font-size: .8rem; }}
"""


def find_nastaliq_font() -> Path | None:
    """The Nastaliq font file evalkit ships (Noto Nastaliq Urdu), or None if it is missing."""
    path = nastaliq_font_path()
    return path if path.is_file() else None


def _font_face(body: str) -> str:
    if not has_arabic(body):
        return ""
    font = bundled_nastaliq_bytes()
    if font is None:
        return ""
    data = base64.b64encode(font).decode("ascii")
    return (
        '@font-face { font-family: "Noto Nastaliq Urdu"; font-display: swap; '
        f'src: local("Noto Nastaliq Urdu"), url(data:font/ttf;base64,{data}) format("truetype"); }}'
    )


def report_page(title: str, body: str, *, failed: bool = False) -> str:
    """A whole HTML page around ``body`` (already HTML), with evalkit's CSS and fonts."""
    warning = (
        '<div class="evalkit-failed"><strong>The notebook did not run to the end.</strong> '
        "What it produced before the error is below; the error is shown where it happened.</div>"
        if failed
        else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_font_face(body)}\n{PAGE_CSS}\n{REPORT_CSS}</style>\n</head>\n<body>\n"
        f"{warning}{body}\n"
        '<div class="evalkit-footer">Made by evalkit. Nothing on this page is loaded from '
        "elsewhere.</div>\n</body>\n</html>\n"
    )
