"""Score plots: distributions per side, and a persona x variable-record heatmap."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from numpy.typing import NDArray

from ...compare import Comparison
from ...grading import GradesLike
from ...store import Run
from .. import _fonts
from .._frames import conversation_scores, record_labels
from ._common import SIDE_COLORS, add_caption, left_out_text, new_figure, style_urdu_labels

__all__ = ["ScoresLike", "persona_record_heatmap", "score_distributions"]

#: Grades (objects or frames) or conversation scores, by side label or in order
#: (baseline, candidate).
ScoresLike = Mapping[str, GradesLike | pd.Series] | Sequence[GradesLike | pd.Series]

_BINS = np.linspace(0.0, 100.0, 11)
_DEFAULT_LABELS = ("baseline", "candidate")


def _sides_from_comparison(comparison: Comparison) -> dict[str, pd.Series]:
    cells = comparison.by_cell
    return {side: cells[f"score_{side}"].astype("float64") for side in _DEFAULT_LABELS}


def _named(data: ScoresLike) -> dict[str, pd.Series]:
    if isinstance(data, Mapping):
        return {str(k): conversation_scores(v) for k, v in data.items()}
    labels = [*_DEFAULT_LABELS, *(f"side {i}" for i in range(3, len(data) + 1))]
    return {labels[i]: conversation_scores(v) for i, v in enumerate(data)}


def _draw_histograms(ax: Any, sides: Mapping[str, pd.Series], unit: str) -> None:
    width = (_BINS[1] - _BINS[0]) / (len(sides) + 1)
    centres = _BINS[:-1] + width / 2
    for i, (label, scores) in enumerate(sides.items()):
        values = scores.dropna().to_numpy()
        counts, _ = np.histogram(values, bins=_BINS)
        color = SIDE_COLORS[i % len(SIDE_COLORS)]
        mean = f", mean {values.mean():.1f}" if len(values) else ""
        ax.bar(
            centres + i * width,
            counts,
            width=width,
            color=color,
            align="edge",
            label=f"{label} (n = {len(values)}{mean})",
        )
        if len(values):
            ax.axvline(values.mean(), color=color, linestyle="--", linewidth=1.2)
    ax.set_xlim(0, 100)
    ax.set_xticks(_BINS)
    ax.set_xlabel("score (0-100)")
    ax.set_ylabel(unit)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", fontsize=9, frameon=False)


def _draw_intervals(ax: Any, comparison: Comparison) -> None:
    """Each side's grid score with its interval, as error bars above the bars."""
    row = comparison.summary.iloc[0]
    top = ax.get_ylim()[1]
    for i, side in enumerate(_DEFAULT_LABELS):
        est, low, high = (float(row[f"score_{side}{s}"]) for s in ("", "_low", "_high"))
        y = top * (1.04 + 0.06 * i)
        ax.errorbar(
            [est],
            [y],
            xerr=[[est - low], [high - est]],
            fmt="o",
            capsize=4,
            color=SIDE_COLORS[i],
            clip_on=False,
        )
        ax.annotate(
            f"{side} {est:.1f} [{low:.1f}, {high:.1f}]",
            (high, y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            color=SIDE_COLORS[i],
        )
    ax.set_ylim(0, top * 1.18)


def _comparison_caption(comparison: Comparison) -> str:
    row = comparison.summary.iloc[0]
    parts = [
        f"n = {int(row['cells_paired'])} cells paired "
        f"({int(row['conversations_baseline'])} vs {int(row['conversations_candidate'])} "
        "conversations)"
    ]
    for side in _DEFAULT_LABELS:
        parts.append(f"{side}: {left_out_text(comparison.left_out.get(side, {}))}")
    return "; ".join(parts)


def score_distributions(
    data: Comparison | ScoresLike,
    *,
    left_out: Mapping[str, Mapping[str, int]] | None = None,
) -> Figure:
    """Histograms of scores per side, with each side's mean (dashed).

    ``data`` is a :class:`~evalkit.compare.Comparison` (cell mean scores, plus each side's
    grid score and interval) or grades (``Grades`` or frames) / score Series per side. ``left_out`` (per side
    label, counts by status) is named in the caption; a Comparison brings its own.
    """
    fig, (ax,) = new_figure(3.6)
    if isinstance(data, Comparison):
        sides = _sides_from_comparison(data)
        _draw_histograms(ax, sides, "cells")
        _draw_intervals(ax, data)
        ax.set_title(f"Cell mean scores per side — verdict: {data.verdict.value}")
        add_caption(fig, _comparison_caption(data))
        return fig
    sides = _named(data)
    _draw_histograms(ax, sides, "conversations")
    ax.set_title("Conversation scores per side")
    counts = " vs ".join(str(int(s.notna().sum())) for s in sides.values())
    parts = [f"n = {counts} conversations scored"]
    unscored = sum(int(s.isna().sum()) for s in sides.values())
    if unscored:
        parts.append(f"{unscored} with no applicable rule left out")
    for label in sides:
        if left_out is not None and label in left_out:
            parts.append(f"{label}: {left_out_text(left_out[label])}")
    add_caption(fig, "; ".join(parts))
    return fig


def _cell_means(
    scored: pd.DataFrame, personas: list[str], records: list[str]
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Mean score and count per (persona, record), shaped ``(personas, records)``."""
    means = np.full((len(personas), len(records)), np.nan)
    counts = np.zeros((len(personas), len(records)), dtype=np.int64)
    rows = {p: i for i, p in enumerate(personas)}
    cols = {r: j for j, r in enumerate(records)}
    groups = scored.groupby([scored["persona_label"].astype(str), "record"])["score"]
    for (persona, record), values in groups:
        i, j = rows[str(persona)], cols[str(record)]
        means[i, j] = float(values.mean())
        counts[i, j] = len(values)
    return means, counts


def persona_record_heatmap(
    scores: GradesLike | pd.Series, conversations: pd.DataFrame | Run
) -> Figure:
    """Mean score per persona (rows) x variable record (columns), with n in each cell.

    ``scores`` is grades (a ``Grades`` or its frame) or scores by conversation id; ``conversations`` (or a Run)
    gives each conversation's persona, variables and status. Conversations with no score
    (not ``done``, or no applicable rule) are left out and counted in the caption.
    """
    conv = conversations.conversations if isinstance(conversations, Run) else conversations
    font = _fonts.find_arabic_font()
    by_id = conversation_scores(scores)
    frame = conv[["conversation_id", "persona_label", "variables", "status"]].copy()
    frame["score"] = frame["conversation_id"].astype(str).map(by_id).astype("float64")
    labels = record_labels(frame["variables"], font)
    frame["record"] = frame["variables"].astype(str).map(labels)
    scored = frame[frame["score"].notna()]
    gone = frame[frame["score"].isna()]
    personas = list(pd.unique(frame["persona_label"].astype(str)))
    records = list(labels.values())
    grid, count = _cell_means(scored, personas, records)
    fig, (ax,) = new_figure(max(2.6, 0.5 * len(personas) + 1.6))
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for (r, c), value in np.ndenumerate(grid):
        if not np.isnan(value):
            text = f"{value:.0f}\nn={count[r, c]}"
            ax.text(c, r, text, ha="center", va="center", fontsize=8)
    ax.set_yticks(
        range(len(personas)),
        labels=[
            _fonts.directed(_fonts.plot_label(p, f"persona {i + 1}", font))
            for i, p in enumerate(personas)
        ],
    )
    ax.set_xticks(range(len(records)), labels=[_fonts.directed(r) for r in records])
    style_urdu_labels([*ax.get_yticklabels(), *ax.get_xticklabels()], font)
    ax.set_xlabel("variable record")
    ax.set_title("Mean score by persona and variable record")
    fig.colorbar(image, ax=ax, label="mean score", shrink=0.9)
    reasons = gone["status"].where(gone["status"] != "done", "unscored").astype(str)
    add_caption(
        fig,
        f"n = {len(scored)} conversations scored; "
        f"{left_out_text({str(k): int(v) for k, v in reasons.value_counts().items()})}",
    )
    return fig
