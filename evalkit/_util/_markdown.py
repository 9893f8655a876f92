"""Markdown for results: GitHub-flavoured tables and escaped text (job summaries, pull-request
comments). No dependency: pandas' own ``to_markdown`` needs tabulate."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["markdown_cell", "markdown_table", "markdown_text"]

#: Rows a table shows before it says how many it left out.
MAX_ROWS = 30


def markdown_text(text: str) -> str:
    """``text`` safe inside a Markdown paragraph or table cell: pipes, backslashes, angle
    brackets, asterisks, backticks and square brackets escaped (an underscore inside a word
    is not emphasis in GitHub-flavoured Markdown), line breaks as spaces."""
    out = str(text).replace("\\", "\\\\")
    for mark in ("|", "*", "`", "[", "]"):
        out = out.replace(mark, "\\" + mark)
    out = out.replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(out.splitlines())


def markdown_cell(value: Any) -> str:
    """One table cell: numbers to one decimal (or as a share when below 1 in magnitude),
    missing values as ``n/a``, everything else as escaped text."""
    if value is None or str(value) in ("<NA>", "NaT"):
        return "n/a"
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return "yes" if bool(value) else "no"
    if isinstance(value, float) or type(value).__module__ == "numpy":
        try:
            number = float(value)
        except (TypeError, ValueError):
            return markdown_text(str(value))
        if math.isnan(number):
            return "n/a"
        if number.is_integer() and abs(number) < 1e15:
            return str(int(number))
        return f"{number:.3f}" if abs(number) < 1 else f"{number:.1f}"
    return markdown_text(str(value))


def markdown_table(
    frame: pd.DataFrame, columns: Sequence[str] | None = None, *, max_rows: int = MAX_ROWS
) -> str:
    """``frame`` (its ``columns``, those it has; None: all) as a Markdown table; "" when it has
    no row or no such column. Longer frames show their first ``max_rows`` rows and a line
    saying how many more there are."""
    shown = [c for c in (columns if columns is not None else frame.columns) if c in frame.columns]
    if not shown or frame.empty:
        return ""
    lines = [
        "| " + " | ".join(markdown_text(str(c)) for c in shown) + " |",
        "|" + "---|" * len(shown),
    ]
    for row in frame[shown].head(max_rows).itertuples(index=False):
        lines.append("| " + " | ".join(markdown_cell(v) for v in row) + " |")
    if len(frame) > max_rows:
        lines.append(f"\n{len(frame) - max_rows} more rows not shown.")
    return "\n".join(lines)
