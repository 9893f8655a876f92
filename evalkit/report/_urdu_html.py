"""Text as escaped HTML with its Urdu marked, so the browser sets it in Nastaliq, right to left.

A text whose letters are mostly Arabic script becomes one right-to-left block
(``<div lang="ur" dir="rtl">``); in a mostly Latin text, each run of Urdu words becomes an
isolated right-to-left span (``<bdi lang="ur" dir="rtl">``, kept on one line when short), so "a farewell (اللہ حافظ / خدا
حافظ, in either script)" keeps its English order and its Urdu reads right to left in Nastaliq.
"""

from __future__ import annotations

import html

from ._fonts import arabic_runs, is_arabic_script

__all__ = ["NOWRAP_CLASS", "NOWRAP_MAX", "URDU_CLASS", "urdu_html"]

#: The class of every marked piece of Urdu (``REPORT_CSS`` gives it the Nastaliq stack).
URDU_CLASS = "ek-ur"
#: A short Urdu phrase inside Latin text stays on one line (a line break inside it would split
#: its right-to-left order across lines); longer runs wrap as usual.
NOWRAP_CLASS, NOWRAP_MAX = "ek-nowrap", 40


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def urdu_html(text: str) -> str:
    """``text`` escaped, its Urdu marked with ``lang="ur"`` and ``dir="rtl"``."""
    if is_arabic_script(text):
        return f'<div class="{URDU_CLASS}" lang="ur" dir="rtl">{_escape(text)}</div>'
    pieces: list[str] = []
    done = 0
    for start, end in arabic_runs(text):
        run = text[start:end]
        classes = URDU_CLASS + (f" {NOWRAP_CLASS}" if len(run) <= NOWRAP_MAX else "")
        pieces.append(_escape(text[done:start]))
        pieces.append(f'<bdi class="{classes}" lang="ur" dir="rtl">{_escape(run)}</bdi>')
        done = end
    pieces.append(_escape(text[done:]))
    return "".join(pieces)
