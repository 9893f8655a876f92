"""What every plot shares: a report-width figure, a caption with n and what was left out,
label wrapping, colour tables, the fonts of labels that may be Urdu, and row labels stacked
line by line (each line in its own font and line height) with rows as tall as their labels."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text
from matplotlib.transforms import ScaledTranslation

from .._fonts import ArabicFont, arabic_runs, has_arabic, is_arabic_script, label_families

__all__ = [
    "CAPTION_GID",
    "DIRECTION_COLORS",
    "ROW_LABEL_GID",
    "SIDE_COLORS",
    "STATUS_COLORS",
    "add_caption",
    "color_for",
    "fit_rows",
    "keep_urdu_runs_together",
    "left_out_text",
    "new_figure",
    "row_labels",
    "style_urdu_labels",
    "wrap_label",
]

#: ``gid`` of the caption text, so tests and tools can find it among ``fig.texts``.
CAPTION_GID = "evalkit-caption"
#: ``gid`` of each line of a row label drawn by :func:`row_labels` (among ``ax.texts``).
ROW_LABEL_GID = "evalkit-row-label"

#: Report width: 900 px at 100 dpi.
_WIDTH_IN = 9.0
_DPI = 100
#: Where the caption starts (inches from the lower left), the room kept for a one-line
#: caption, and the gap between a caption and the plot's x label.
_CAPTION_AT_IN = (0.09, 0.04)
_CAPTION_ROOM_IN = 0.35
_CAPTION_GAP_IN = 0.13

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
        layout=ConstrainedLayoutEngine(rect=_above(_CAPTION_ROOM_IN, height_in)),
    )
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _above(room_in: float, height_in: float) -> tuple[float, float, float, float]:
    """The layout's rect: the whole figure but ``room_in`` inches at the bottom."""
    return (0, room_in / height_in, 1, 1 - room_in / height_in)


def add_caption(fig: Figure, text: str) -> None:
    """Write ``text`` (n and what was left out) under the plot, left-aligned, wrapped at the
    figure's right edge; the plot keeps clear of as many lines as it takes."""
    caption = fig.text(
        *_CAPTION_AT_IN,
        text,
        ha="left",
        va="bottom",
        fontsize=9,
        color="#4a5468",
        gid=CAPTION_GID,
        wrap=True,
        transform=fig.dpi_scale_trans,
    )
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):
        room = _CAPTION_AT_IN[1] + caption.get_window_extent().height / fig.dpi + _CAPTION_GAP_IN
        engine.set(rect=_above(room, fig.get_figheight()))


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

    When any label of the group holds Urdu in Latin text and a Latin face without Arabic
    letters is installed, every label of the group gets that face, so the labels of one axis
    look alike. Without one, only labels holding Urdu get the Urdu font: a label's line height
    is its first font's, and the Nastaliq font's is more than twice a Latin face's.
    """
    labels = list(labels)
    texts = [label.get_text() for label in labels]
    mixed = [t for t in texts if has_arabic(t) and not is_arabic_script(t)]
    shared = label_families(mixed[0], font) if mixed else None
    if shared is not None and font is not None and shared[0] == font.family:
        shared = None  # no Latin partner: Latin labels keep the default face
    for label, text in zip(labels, texts, strict=True):
        families = shared or label_families(text, font)
        if families is not None:
            label.set_fontfamily(families)


def _tick_room_pt() -> float:
    """Points between the axes' left edge and its y tick labels (tick length + pad)."""
    return float(rcParams["ytick.major.size"]) + float(rcParams["ytick.major.pad"])


def row_labels(
    ax: Axes,
    y: Sequence[float],
    labels: Sequence[str],
    font: ArabicFont | None,
    fontsize: float = 9,
) -> float:
    """Label row ``y[i]`` left of ``ax`` with ``labels[i]``, one text per line, centred on the
    row; return the tallest label's height in inches.

    A y tick label is one text with one line height for all its lines, its first font's: a
    label holding Urdu would space its Latin lines as far apart as Nastaliq's (more than twice
    a Latin face's). Here each line has its own font (:func:`style_urdu_labels` over all the
    lines) and its own height. The ticks stay; their labels are these texts
    (``gid`` :data:`ROW_LABEL_GID`, in ``ax.texts``).
    """
    ax.set_yticks(list(y), labels=[""] * len(y))
    lines = [
        [ax.text(0, yi, line, ha="right", va="center", fontsize=fontsize, gid=ROW_LABEL_GID)
         for line in label.split("\n")]
        for yi, label in zip(y, labels, strict=True)
    ]  # fmt: skip
    style_urdu_labels([t for stack in lines for t in stack], font)
    fig = ax.get_figure(root=True)
    assert isinstance(fig, Figure)
    tallest = 0.0
    for stack in lines:
        heights = [t.get_window_extent().height * 72 / fig.dpi for t in stack]  # points
        top = sum(heights) / 2
        for text, height in zip(stack, heights, strict=True):
            shift = ScaledTranslation(
                -_tick_room_pt() / 72, (top - height / 2) / 72, fig.dpi_scale_trans
            )
            text.set_transform(ax.get_yaxis_transform() + shift)
            top -= height
        tallest = max(tallest, sum(heights) / 72)
    return tallest


def fit_rows(fig: Figure, ax: Axes, rows: float, row_in: float) -> None:
    """Make ``fig`` tall enough that ``ax`` gives each of ``rows`` data units of its y axis
    ``row_in`` inches (after the layout has taken the title, x label and caption), keeping
    the caption's room at the bottom."""
    engine = fig.get_layout_engine()
    caption_in = 0.0
    if isinstance(engine, ConstrainedLayoutEngine):
        caption_in = float(engine.get()["rect"][1]) * fig.get_figheight()
    for _ in range(3):  # margins are fixed in inches: one step is enough, rounding aside
        fig.draw_without_rendering()
        short = rows * row_in - ax.get_position().height * fig.get_figheight()
        if short <= 0.01:
            return
        height = fig.get_figheight() + short
        fig.set_figheight(height)
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.set(rect=_above(caption_in, height))
