"""Static HTML pieces for reports: transcripts as bubbles, rule verdicts, tables.

The markup lives in templates (``evalkit/templates/transcript.html``, ``rules.html``,
``table.html``, ``side_by_side.html``, ``page.html``) styled by the one stylesheet; this module
only shapes the data. Everything is escaped. A turn gets ``lang="ur" dir="rtl"`` and the
Nastaliq font stack only when most of its letters are Arabic script; Latin turns stay left to
right. In tables and rule titles, Urdu is marked by ``urdu_html`` (a right-to-left block, or
isolated Urdu runs in Latin text). A rule's evidence turn carries an anchor and a mark naming
the rule, and the rules table links to it. No CDN, no web fonts: the browser uses an installed
Nastaliq font, else a Naskh one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from markupsafe import Markup

from .._util import render_html, stylesheet
from ..grading import GradesLike, as_grades_frame
from ._fonts import is_arabic_script
from ._urdu_html import urdu_html

__all__ = [
    "TranscriptOptions",
    "anchor_id",
    "html_page",
    "rules_html",
    "side_by_side_html",
    "table_html",
    "transcript_html",
]


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


def rules_html(grades: GradesLike, anchor: str = "conv") -> str:
    """One conversation's rules: verdict chip, title, rationale, and a link to the evidence."""
    grades = as_grades_frame(grades)
    rows = []
    for row in grades.itertuples(index=False):
        turn = getattr(row, "evidence_turn", None)
        number = None if turn is None or pd.isna(turn) else int(turn)
        rows.append(
            {
                "verdict": str(row.verdict),
                "title": urdu_html(str(getattr(row, "title", row.rule_id))),
                "rule_id": str(row.rule_id),
                "rationale": _cell(getattr(row, "rationale", None)),
                "anchor": None if number is None else anchor_id(anchor, number),
                "turn": number,
            }
        )
    return render_html("rules.html", rows=rows)


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
    after = opts.after_turn or {}
    ordered = turns.sort_values("index")
    bubbles = [
        {
            "index": int(i),
            "role": str(role),
            "text": str(text),
            "urdu": is_arabic_script(str(text), opts.arabic_threshold),
            "anchor": anchor_id(opts.anchor, int(i)),
            "marks": marks.get(int(i), []),
            "after": Markup(after.get(int(i), "")),  # trusted: the caller's controls
        }
        for i, role, text in zip(ordered["index"], ordered["role"], ordered["text"], strict=True)
    ]
    rules = rules_html(grades, opts.anchor) if grades is not None and opts.rules else ""
    return render_html("transcript.html", title=opts.title, rules=rules, turns=bubbles)


def side_by_side_html(panes: Mapping[str, str]) -> str:
    """Pieces of HTML next to each other, each under its (escaped) label."""
    return render_html(
        "side_by_side.html", panes=[(label, Markup(body)) for label, body in panes.items()]
    )


def _cell(value: Any, float_format: str = "{:.1f}") -> str:
    """One table cell: Urdu marked (escaped), a missing value as ``–``."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return "–"
    if isinstance(value, float):
        return float_format.format(value)
    return urdu_html(str(value))


def table_html(frame: pd.DataFrame, max_rows: int = 50, float_format: str = "{:.1f}") -> str:
    """``frame`` as an escaped HTML table, Urdu marked (first ``max_rows`` rows, a note if cut)."""
    shown = frame.head(max_rows)
    rows = [[_cell(v, float_format) for v in row] for row in shown.itertuples(index=False)]
    return render_html(
        "table.html",
        columns=[str(c) for c in shown.columns],
        rows=rows,
        more=max(0, len(frame) - len(shown)),
    )


def html_page(title: str, body: str) -> str:
    """A complete static HTML document with the one stylesheet (nothing loaded from outside)."""
    return render_html("page.html", title=title, body=Markup(body), css=stylesheet())
