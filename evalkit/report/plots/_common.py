"""What every plot shares: a report-width figure, a caption with n and what was left out,
label wrapping, colour tables, and the font keywords for labels that may be Urdu."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .._fonts import ArabicFont

__all__ = [
    "CAPTION_GID",
    "DIRECTION_COLORS",
    "SIDE_COLORS",
    "STATUS_COLORS",
    "add_caption",
    "color_for",
    "label_font",
    "left_out_text",
    "new_figure",
    "wrap_label",
]

#: ``gid`` of the caption text, so tests and tools can find it among ``fig.texts``.
CAPTION_GID = "evalkit-caption"

#: Report width: 900 px at 100 dpi.
_WIDTH_IN = 9.0
_DPI = 100

DIRECTION_COLORS: Mapping[str, str] = {
    "improved": "#1a7f37",
    "regressed": "#c62828",
    "no_difference": "#57606a",
    "insufficient_evidence": "#9a6700",
}
STATUS_COLORS: Mapping[str, str] = {
    "done": "#1a7f37",
    "dropped": "#9a6700",
    "error": "#c62828",
    "failed": "#6e40c9",
}
SIDE_COLORS: tuple[str, ...] = ("#1f5fbf", "#d9730d", "#2e8b57", "#8e44ad")
_OTHER_COLOR = "#8c959f"


def color_for(table: Mapping[str, str], key: str) -> str:
    """``table[key]``, grey for anything the table does not name."""
    return table.get(key, _OTHER_COLOR)


def new_figure(height_in: float, ncols: int = 1) -> tuple[Figure, list[Any]]:
    """A figure 900 px wide with ``ncols`` axes and room at the bottom for the caption."""
    fig = Figure(
        figsize=(_WIDTH_IN, height_in),
        dpi=_DPI,
        layout=ConstrainedLayoutEngine(rect=(0, 0.35 / height_in, 1, 1 - 0.35 / height_in)),
    )
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def add_caption(fig: Figure, text: str) -> None:
    """Write ``text`` (n and what was left out) under the plot, left-aligned."""
    fig.text(0.01, 0.01, text, ha="left", va="bottom", fontsize=9, color="#4a5468", gid=CAPTION_GID)


def left_out_text(counts: Mapping[str, int]) -> str:
    """``"3 error, 2 dropped left out"``, or ``"none left out"``."""
    parts = [f"{n} {status}" for status, n in sorted(counts.items()) if n]
    return f"{', '.join(parts)} left out" if parts else "none left out"


def wrap_label(text: str, width: int = 30, max_lines: int = 2) -> str:
    """``text`` wrapped to ``width`` characters, at most ``max_lines`` lines (ellipsis if cut)."""
    lines = textwrap.wrap(" ".join(text.split()), width=width, max_lines=max_lines, placeholder="…")
    return "\n".join(lines) if lines else text


def label_font(font: ArabicFont | None) -> dict[str, Any]:
    """Text keywords for labels that may hold Urdu: the found font as a fallback family."""
    return {"fontfamily": ["sans-serif", font.family]} if font is not None else {}
