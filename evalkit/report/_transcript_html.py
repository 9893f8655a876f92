"""Static HTML pieces for reports: transcripts as bubbles, rule verdicts, tables, one CSS string.

Everything is escaped. A turn gets ``lang="ur" dir="rtl"`` and the Nastaliq font stack only
when most of its letters are Arabic script; Latin turns stay left to right. In tables and rule
titles, Urdu is marked by ``urdu_html`` (a right-to-left block, or isolated Urdu runs in Latin
text). A rule's evidence
turn carries an anchor and a mark naming the rule, and the rules table links to it. No CDN, no
web fonts: the browser uses an installed Nastaliq font, else a Naskh one.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..grading import GradesLike, as_grades_frame
from ._fonts import NASTALIQ_FONT_STACK, is_arabic_script
from ._urdu_html import NOWRAP_CLASS, URDU_CLASS, urdu_html

__all__ = [
    "REPORT_CSS",
    "TranscriptOptions",
    "anchor_id",
    "html_page",
    "rules_html",
    "side_by_side_html",
    "table_html",
    "transcript_html",
]

#: Verdict -> (background, text colour) of its chip.
_VERDICT_COLORS: Mapping[str, tuple[str, str]] = {
    "pass": ("#dafbe1", "#1a7f37"),
    "fail": ("#ffebe9", "#c62828"),
    "na": ("#eaeef2", "#57606a"),
    "error": ("#fbefff", "#6e40c9"),
}

_VERDICT_CSS = "".join(
    f".ek-v-{name}{{background:{bg};color:{fg}}}" for name, (bg, fg) in _VERDICT_COLORS.items()
)

#: The CSS every evalkit report piece uses (classes prefixed ``ek-``).
REPORT_CSS = (
    ".ek{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330}"
    ".ek-conv{border:1px solid #d5d9e0;border-radius:6px;padding:.5rem .8rem;margin:.5rem 0;"
    "min-width:0}"
    ".ek-conv h3{font-size:.95rem;margin:.2rem 0 .5rem;color:#4a5468}"
    ".ek-turn{margin:.35rem 0;padding:.35rem .6rem;border-radius:8px;max-width:85%;"
    "border:1px solid transparent}"
    ".ek-agent{background:#eef4ff}.ek-caller{background:#fff4e6;margin-left:auto}"
    ".ek-role{font-size:.75rem;color:#4a5468}"
    ".ek-text{white-space:pre-wrap;overflow-wrap:anywhere}"
    f'.ek-text[lang="ur"]{{font-family:{NASTALIQ_FONT_STACK};direction:rtl;text-align:right;'
    "line-height:2.3;font-size:1.1rem}"
    f".{URDU_CLASS}{{font-family:{NASTALIQ_FONT_STACK};font-size:1.1em;line-height:2}}"
    f"div.{URDU_CLASS}{{text-align:right}}.{NOWRAP_CLASS}{{white-space:nowrap}}"
    ".ek-evidence{border-color:#d4a72c;box-shadow:0 0 0 2px #fff8c5}"
    ".ek-mark{display:inline-block;font-size:.72rem;padding:0 .35rem;margin:.15rem .2rem 0 0;"
    "border-radius:4px}"
    ".ek-chip{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.8rem}"
    ".ek-table{border-collapse:collapse;margin:.5rem 0;font-size:.85rem}"
    ".ek-table td,.ek-table th{border:1px solid #d5d9e0;padding:.25rem .5rem;text-align:left;"
    "vertical-align:top}"
    ".ek-table th{background:#f3f5f8}"
    ".ek-pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}"
    ".ek-note{color:#4a5468;font-size:.85rem}"
    ".ek-plot{max-width:100%;height:auto}" + _VERDICT_CSS
)


@dataclass(frozen=True)
class TranscriptOptions:
    """How a transcript renders: a heading, the anchor prefix, the Arabic-share threshold;
    ``rules=False`` leaves out the rules table (the evidence marks stay); ``after_turn`` maps a
    turn index to trusted HTML placed under that turn (a player, a control)."""

    title: str = ""
    anchor: str = "conv"
    arabic_threshold: float = 0.5
    rules: bool = True
    after_turn: Mapping[int, str] | None = None


def _esc(value: Any) -> str:
    return (
        ""
        if value is None or (not isinstance(value, str) and pd.isna(value))
        else (html.escape(str(value), quote=True))
    )


def anchor_id(prefix: str, turn: int) -> str:
    """A safe element id for ``turn`` of the transcript whose anchors start with ``prefix``."""
    return f"{re.sub(r'[^A-Za-z0-9_-]', '-', prefix)}-t{turn}"


def _evidence(grades: pd.DataFrame | None) -> dict[int, list[tuple[str, str]]]:
    """Turn index -> [(rule_id, verdict)] of the rules that cite it."""
    marks: dict[int, list[tuple[str, str]]] = {}
    if grades is None or grades.empty or "evidence_turn" not in grades.columns:
        return marks
    for row in grades.itertuples(index=False):
        turn = getattr(row, "evidence_turn", None)
        if turn is None or pd.isna(turn):
            continue
        marks.setdefault(int(turn), []).append((str(row.rule_id), str(row.verdict)))
    return marks


def _turn_html(
    index: int, role: str, text: str, marks: Sequence[tuple[str, str]], opts: TranscriptOptions
) -> str:
    urdu = is_arabic_script(text, opts.arabic_threshold)
    lang = ' lang="ur" dir="rtl"' if urdu else ""
    classes = f"ek-turn ek-{_esc(role)}" + (" ek-evidence" if marks else "")
    badges = "".join(
        f'<mark class="ek-mark ek-v-{_esc(verdict)}">{_esc(rule)}: {_esc(verdict)}</mark>'
        for rule, verdict in marks
    )
    return (
        f'<div class="{classes}" id="{anchor_id(opts.anchor, index)}">'
        f'<div class="ek-role">{_esc(role)} · {index}</div>'
        f'<div class="ek-text"{lang}>{_esc(text)}</div>'
        + (f'<div class="ek-marks">{badges}</div>' if badges else "")
        + (opts.after_turn or {}).get(index, "")
        + "</div>"
    )


def rules_html(grades: GradesLike, anchor: str = "conv") -> str:
    """One conversation's rules: verdict chip, title, rationale, and a link to the evidence."""
    grades = as_grades_frame(grades)
    if grades.empty:
        return '<p class="ek-note">No grades for this conversation.</p>'
    rows = []
    for row in grades.itertuples(index=False):
        turn = getattr(row, "evidence_turn", None)
        link = (
            f'<a href="#{anchor_id(anchor, int(turn))}">turn {int(turn)}</a>'
            if turn is not None and not pd.isna(turn)
            else "–"
        )
        verdict = _esc(row.verdict)
        rows.append(
            f'<tr><td><span class="ek-chip ek-v-{verdict}">{verdict}</span></td>'
            f"<td>{urdu_html(str(getattr(row, 'title', row.rule_id)))}<br>"
            f'<span class="ek-note">{_esc(row.rule_id)}</span></td>'
            f"<td>{_cell(getattr(row, 'rationale', None))}</td><td>{link}</td></tr>"
        )
    head = "<tr><th>verdict</th><th>rule</th><th>rationale</th><th>evidence</th></tr>"
    return f'<table class="ek-table">{head}{"".join(rows)}</table>'


def transcript_html(
    turns: pd.DataFrame,
    grades: GradesLike | None = None,
    options: TranscriptOptions | None = None,
) -> str:
    """One conversation as bubbles (``turns``: index, role, text), its rules above them
    (``grades``: a ``Grades`` or its frame)."""
    opts = options or TranscriptOptions()
    grades = None if grades is None else as_grades_frame(grades)
    marks = _evidence(grades)
    ordered = turns.sort_values("index")
    bubbles = [
        _turn_html(int(i), str(role), str(text), marks.get(int(i), ()), opts)
        for i, role, text in zip(ordered["index"], ordered["role"], ordered["text"], strict=True)
    ]
    if not bubbles:
        bubbles = ['<p class="ek-note">No turns.</p>']
    head = f"<h3>{_esc(opts.title)}</h3>" if opts.title else ""
    rules = rules_html(grades, opts.anchor) if grades is not None and opts.rules else ""
    return f'<div class="ek ek-conv">{head}{rules}{"".join(bubbles)}</div>'


def side_by_side_html(panes: Mapping[str, str]) -> str:
    """Pieces of HTML next to each other, each under its (escaped) label."""
    cells = "".join(
        f'<div><p class="ek-note"><b>{_esc(label)}</b></p>{body}</div>'
        for label, body in panes.items()
    )
    return f'<div class="ek ek-pair">{cells}</div>'


def _cell(value: Any, float_format: str = "{:.1f}") -> str:
    """One table cell as HTML: escaped, Urdu marked, a missing value as ``–``."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return "–"
    if isinstance(value, float):
        return _esc(float_format.format(value))
    return urdu_html(str(value))


def table_html(frame: pd.DataFrame, max_rows: int = 50, float_format: str = "{:.1f}") -> str:
    """``frame`` as an escaped HTML table, Urdu marked (first ``max_rows`` rows, a note if cut)."""
    shown = frame.head(max_rows).map(lambda value: _cell(value, float_format))
    shown.columns = [_esc(name) for name in shown.columns]
    body = shown.to_html(index=False, escape=False, border=0, classes="ek-table")
    more = len(frame) - len(shown)
    note = f'<p class="ek-note">… {more} more rows not shown</p>' if more > 0 else ""
    return f'<div class="ek">{body}{note}</div>'


def html_page(title: str, body: str) -> str:
    """A complete static HTML document with :data:`REPORT_CSS` (nothing loaded from outside)."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{REPORT_CSS}</style></head>"
        f'<body class="ek" style="max-width:1200px;margin:2rem auto;padding:0 1rem">'
        f"{body}</body></html>"
    )
