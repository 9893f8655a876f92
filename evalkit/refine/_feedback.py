"""Owner feedback: the spec's rules checked before sending, and a suggested draft from grades.

:func:`suggest_feedback` turns a graded run's failing rules into plain-language feedback for
E10: one line per failing behaviour (worst first, by points lost), each with a short quoted
example from the evidence turn. Held-out cells are never quoted nor counted, so the feedback
cannot leak what will judge it.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, Final

import pandas as pd

from .._util import redact_text
from ..api import MAX_OWNER_FEEDBACK_CHARS, InvalidRequestError, Problem, RefineBody, request_errors
from ..grading import GradesLike, as_grades_frame
from ..store import Run

__all__ = ["MAX_FEEDBACK_CHARS", "MAX_QUOTE_CHARS", "suggest_feedback", "validate_feedback"]

MAX_FEEDBACK_CHARS: Final = MAX_OWNER_FEEDBACK_CHARS
"""E10's limit on ``ownerFeedback`` (the spec's, as :mod:`evalkit.api` states it)."""
MAX_QUOTE_CHARS: Final = 120
_QUOTES_PER_RULE: Final = 2
_HEADER: Final = (
    "Rehearsed calls fell short of these expectations; please change the prompt so that every "
    "call meets them:"
)


def validate_feedback(owner_feedback: object) -> str:
    """``owner_feedback`` when E10 takes it (the spec's rules, as the client checks them) and
    it says something; otherwise an :class:`~evalkit.InvalidRequestError` (nothing is sent)."""
    problems = request_errors(RefineBody, {"ownerFeedback": owner_feedback})
    if not problems and isinstance(owner_feedback, str):
        if owner_feedback.strip():
            return owner_feedback
        problems = [Problem("ownerFeedback", "must not be empty")]
    raise InvalidRequestError(problems, what="refine request")


def _quote(text: str, limit: int = MAX_QUOTE_CHARS) -> str:
    flat = " ".join(redact_text(str(text)).split()).replace('"', "'")
    if len(flat) > limit - 2:
        flat = flat[: limit - 3].rstrip() + "…"
    return f'"{flat}"'


def _turns_of(grades: GradesLike) -> pd.DataFrame | None:
    """The turns of the graded run, found from where the grades are stored."""
    path = getattr(grades, "path", None)
    if not isinstance(path, Path):
        return None
    run_dir = path.parent.parent
    if not (run_dir / "manifest.json").exists():
        return None
    turns: pd.DataFrame = Run(run_dir).turns
    return turns


def _evidence_text(fails: pd.DataFrame, turns: pd.DataFrame | None) -> list[str]:
    """Short quotes for a rule's failures: the evidence turn's words, else the rationale."""
    quotes: list[str] = []
    for row in fails.itertuples(index=False):
        text: Any = None
        turn = getattr(row, "evidence_turn", pd.NA)
        if turns is not None and not pd.isna(turn):
            hit = turns[
                (turns["conversation_id"] == row.conversation_id) & (turns["index"] == int(turn))
            ]
            if len(hit):
                text = f"{hit.iloc[0]['role']}: {hit.iloc[0]['text']}"
        if text is None and isinstance(row.rationale, str) and row.rationale:
            text = row.rationale
        if text is not None:
            quote = _quote(text)
            if quote not in quotes:
                quotes.append(quote)
        if len(quotes) >= _QUOTES_PER_RULE:
            break
    return quotes


def suggest_feedback(
    grades: GradesLike,
    turns: pd.DataFrame | None = None,
    exclude_cells: Collection[str] = (),
) -> str:
    """A draft ``ownerFeedback`` naming the failing behaviours of a graded run, worst first.

    ``grades``: a :class:`~evalkit.grading.Grades` (its run's turns are read for quotes) or a
    grades frame (pass ``turns`` to quote, else rationales are quoted). Rows of
    ``exclude_cells`` (held-out cells) are dropped before anything is counted or quoted.
    Behaviours that do not fit in the service's limit (:data:`MAX_FEEDBACK_CHARS`) are left
    out whole. Returns ``""`` when nothing failed.
    """
    frame = as_grades_frame(grades)
    if turns is None:
        turns = _turns_of(grades)
    excluded = set(exclude_cells)
    kept = frame[~frame["cell_id"].isin(excluded)] if excluded else frame
    decided = kept[kept["verdict"].isin(["pass", "fail"])]
    fails = decided[decided["verdict"] == "fail"]
    if fails.empty:
        return ""
    n_decided = decided.groupby("rule_id").size()
    lost = fails.groupby("rule_id")["points"].sum().sort_values(ascending=False, kind="stable")
    lines = [_HEADER]
    size = len(_HEADER)
    for rule_id in lost.index:
        rule_fails = fails[fails["rule_id"] == rule_id]
        title = str(rule_fails["title"].iloc[0]).rstrip(".")
        line = f"- {title} (missed in {len(rule_fails)} of {int(n_decided[rule_id])} calls)."
        quotes = _evidence_text(rule_fails, turns)
        if quotes:
            line += " For example: " + "; ".join(quotes) + "."
        if size + 1 + len(line) > MAX_FEEDBACK_CHARS:
            continue
        lines.append(line)
        size += 1 + len(line)
    return "\n".join(lines) if len(lines) > 1 else ""
