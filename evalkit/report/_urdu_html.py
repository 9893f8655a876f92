"""Text as escaped HTML with its Urdu marked, so the browser sets it in Nastaliq, right to left.

A text whose letters are mostly Arabic script becomes one right-to-left block
(``<div lang="ur" dir="rtl">``); in a mostly Latin text, each run of Urdu words becomes an
isolated right-to-left span (``<bdi lang="ur" dir="rtl">``, kept on one line when short), so "a farewell (اللہ حافظ / خدا
حافظ, in either script)" keeps its English order and its Urdu reads right to left in Nastaliq.
The markup is the template ``evalkit/templates/urdu.html``; this module only finds the runs.
"""

from __future__ import annotations

from .._util import render_html
from ._fonts import arabic_runs, is_arabic_script

__all__ = ["NOWRAP_CLASS", "NOWRAP_MAX", "URDU_CLASS", "urdu_html", "urdu_segments"]

#: The class of every marked piece of Urdu (the stylesheet gives it the Nastaliq stack).
URDU_CLASS = "ek-ur"
#: A short Urdu phrase inside Latin text stays on one line (a line break inside it would split
#: its right-to-left order across lines); longer runs wrap as usual.
NOWRAP_CLASS, NOWRAP_MAX = "ek-nowrap", 40


def urdu_segments(text: str) -> list[tuple[str, str]]:
    """``text`` cut into (piece, kind): ``block`` (the whole text is mostly Urdu), or ``plain``
    and Urdu runs (``run``, ``run_nowrap`` when short), in order."""
    if is_arabic_script(text):
        return [(text, "block")]
    pieces: list[tuple[str, str]] = []
    done = 0
    for start, end in arabic_runs(text):
        run = text[start:end]
        if start > done:
            pieces.append((text[done:start], "plain"))
        pieces.append((run, "run_nowrap" if len(run) <= NOWRAP_MAX else "run"))
        done = end
    if done < len(text):
        pieces.append((text[done:], "plain"))
    return pieces


def urdu_html(text: str) -> str:
    """``text`` escaped, its Urdu marked with ``lang="ur"`` and ``dir="rtl"``."""
    return render_html("urdu.html", segments=urdu_segments(text))
