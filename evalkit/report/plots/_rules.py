"""The per-rule forest plot: each rule's difference with its adjusted interval.

Every rule is labelled with its title above its id: wrapped, whole up to four lines (about 170
characters; a longer one ends in "…", the rule table has it whole), its Urdu drawn in the Urdu
font, shaped and right to left. Each line of a label has its own font and height (a Latin line
is not spaced like Nastaliq), and each row is as tall as the tallest label, measured. A rule
that could not be compared says why on its row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ...compare import Comparison
from .. import _fonts
from .._tables import unscored_reason
from ._common import (
    DIRECTION_COLORS,
    add_caption,
    color_for,
    fit_rows,
    left_out_text,
    new_figure,
    row_labels,
    wrap_label,
)

__all__ = ["rule_forest"]

#: Characters per label line, and lines of title at most.
_LABEL_WIDTH, _LABEL_LINES = 44, 4
#: Inches between one row's label and the next.
_ROW_PAD_IN = 0.12
#: When no installed font draws Urdu, an all-Urdu title is named, not dropped.
_NO_URDU_FONT = "(title in Urdu: no Urdu font installed to draw it)"


def _title_text(row: pd.Series, font: _fonts.ArabicFont | None) -> str:
    title = " ".join(str(row["title"]).split()) if pd.notna(row["title"]) else ""
    if font is None and _fonts.has_arabic(title):
        return _fonts.without_arabic(title) or _NO_URDU_FONT
    return title


def _rule_label(row: pd.Series, font: _fonts.ArabicFont | None) -> str:
    rule_id = str(row["rule_id"])
    title = _title_text(row, font)
    if not title or title == rule_id:
        return rule_id
    wrapped = wrap_label(title, width=_LABEL_WIDTH, max_lines=_LABEL_LINES)
    return _fonts.directed(f"{wrapped}\n[{rule_id}]")


def _mark_not_compared(ax: Axes, y: float, reason: str) -> None:
    ax.text(
        0.0,
        y,
        wrap_label(reason, width=70, max_lines=None),
        ha="center",
        va="center",
        fontsize=8,
        style="italic",
        color="#57606a",
        bbox={"facecolor": "white", "edgecolor": "#d0d7de", "boxstyle": "round,pad=0.3"},
    )


def _caption(comparison: Comparison) -> str:
    rules = comparison.by_rule
    row = comparison.summary.iloc[0]
    left = "; ".join(
        f"{side}: {left_out_text(comparison.left_out.get(side, {}))}"
        for side in ("baseline", "candidate")
    )
    skipped = sum(
        int(rules[f"{kind}_{side}"].sum())
        for kind in ("na", "error")
        for side in ("baseline", "candidate")
        if f"{kind}_{side}" in rules.columns
    )
    return (
        f"n = {int(row['conversations_baseline'])} vs {int(row['conversations_candidate'])} "
        f"conversations, {int(row['cells_paired'])} cells paired; {left}; "
        f"{skipped} na/error rule grades not scored"
    )


def rule_forest(comparison: Comparison) -> Figure:
    """Per-rule difference (candidate - baseline, points) with adjusted intervals.

    Colours follow each rule's direction; the grey band is +/- ``min_effect``; the title
    names the adjustment and its per-rule confidence; the caption gives n and what was left out.
    """
    rules = comparison.by_rule.reset_index(drop=True)
    row = comparison.summary.iloc[0]
    min_effect = float(row["min_effect"])
    font = _fonts.find_arabic_font()
    labels = [_rule_label(r, font) for _, r in rules.iterrows()]
    fig, (ax,) = new_figure(2.8)
    y = np.arange(len(rules))[::-1]
    diff = rules["difference"].to_numpy(dtype=np.float64)
    low = rules["difference_low"].to_numpy(dtype=np.float64)
    high = rules["difference_high"].to_numpy(dtype=np.float64)
    ax.axvspan(-min_effect, min_effect, color="#d0d7de", alpha=0.5, linewidth=0)
    ax.axvline(0.0, color="#57606a", linewidth=1)
    for i, direction in enumerate(rules["direction"].astype(str)):
        color = color_for(DIRECTION_COLORS, direction)
        ax.errorbar(
            [diff[i]],
            [y[i]],
            xerr=[[diff[i] - low[i]], [high[i] - diff[i]]],
            fmt="o",
            color=color,
            capsize=3,
            markersize=6,
        )
    row_in = row_labels(ax, list(y), labels, font) + _ROW_PAD_IN
    for i, r in enumerate(rules.to_dict("records")):
        reason = unscored_reason(r)
        if reason is not None:
            _mark_not_compared(ax, float(y[i]), reason)
    finite = np.concatenate(
        [low[np.isfinite(low)], high[np.isfinite(high)], [-min_effect, min_effect]]
    )
    span = float(np.max(np.abs(finite))) * 1.1 if len(finite) else 10.0
    ax.set_xlim(-max(span, 10.0), max(span, 10.0))
    bottom, top = -0.6, len(rules) - 0.4
    ax.set_ylim(bottom, top)
    ax.set_xlabel("difference in pass rate, candidate - baseline (points)")
    adjustment = str(rules["adjustment"].iloc[0]) if len(rules) else "no"
    level = float(rules["adjusted_confidence"].iloc[0]) if len(rules) else float(row["confidence"])
    ax.set_title(
        f"Per-rule differences — overall {comparison.verdict.value} "
        f"{float(row['difference']):+.1f} points\n"
        f"{adjustment.capitalize()}-adjusted {100 * level:.2f}% intervals; "
        f"band = ±{min_effect:g} points (min effect)",
        fontsize=10,
    )
    compared = [unscored_reason(r) is None for r in rules.to_dict("records")]
    present = list(dict.fromkeys(rules["direction"].astype(str)[compared]))
    handles: list[Artist] = [
        Line2D(
            [],
            [],
            marker="o",
            linestyle="",
            color=color_for(DIRECTION_COLORS, d),
            label=d.replace("_", " "),
        )
        for d in present
    ]
    handles.append(Patch(color="#d0d7de", label=f"±{min_effect:g} min effect"))
    ax.legend(handles=handles, loc="best", fontsize=8, framealpha=0.9)
    add_caption(fig, _caption(comparison))
    fit_rows(fig, ax, top - bottom, row_in)
    return fig
