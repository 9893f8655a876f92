"""What every plot shares: a report-width figure, a caption with n and what was left out,
label wrapping, colour tables, and the fonts of labels that may be Urdu."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text

from .._fonts import ArabicFont, arabic_runs, has_arabic, is_arabic_script, label_families

__all__ = [
    "CAPTION_GID",
    "DIRECTION_COLORS",
    "SIDE_COLORS",
    "STATUS_COLORS",
    "add_caption",
    "color_for",
    "keep_urdu_runs_together",
    "left_out_text",
    "new_figure",
    "style_urdu_labels",
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
_NBSP = "\u00a0"


def keep_urdu_runs_together(text: str, longest: int = 30) -> str:
    """``text`` with the spaces inside each short run of Urdu words (up to ``longest``
    characters) made non-breaking; longer runs wrap between words."""
    out, done = [], 0
    for start, end in arabic_runs(text):
        run = text[start:end]
        out += [text[done:start], run.replace(" ", _NBSP) if len(run) <= longest else run]
        done = end
    return "".join([*out, text[done:]])


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


def wrap_label(text: str, width: int = 30, max_lines: int | None = 2) -> str:
    """``text`` wrapped to ``width`` characters, at most ``max_lines`` lines (ellipsis if cut).

    A run of Urdu words stays on one line (wrapping inside it would scramble its right-to-left
    order across lines).
    """
    kept = keep_urdu_runs_together(" ".join(text.split()))
    lines = textwrap.wrap(kept, width=width, max_lines=max_lines, placeholder="…")
    return "\n".join(line.replace(_NBSP, " ") for line in lines) if lines else text


def style_urdu_labels(labels: Iterable[Text], font: ArabicFont | None) -> None:
    """Draw labels that may hold Urdu with the Urdu font (see ``_fonts.label_families``).

    When any label of the group holds Urdu in Latin text, every label of the group gets the
    same Latin face, so the labels of one axis look alike.
    """
    labels = list(labels)
    texts = [label.get_text() for label in labels]
    mixed = [t for t in texts if has_arabic(t) and not is_arabic_script(t)]
    shared = label_families(mixed[0], font) if mixed else None
    for label, text in zip(labels, texts, strict=True):
        families = shared or label_families(text, font)
        if families is not None:
            label.set_fontfamily(families)
