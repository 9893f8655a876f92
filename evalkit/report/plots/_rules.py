"""The per-rule forest plot: each rule's difference with its adjusted interval."""

from __future__ import annotations

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ...compare import Comparison
from .. import _fonts
from ._common import (
    DIRECTION_COLORS,
    add_caption,
    color_for,
    label_font,
    left_out_text,
    new_figure,
    wrap_label,
)

__all__ = ["rule_forest"]


def _rule_label(row: pd.Series, font: _fonts.ArabicFont | None) -> str:
    rule_id = str(row["rule_id"])
    title = str(row["title"]) if pd.notna(row["title"]) else ""
    title = _fonts.plot_label(title, "", font)
    if not title or title == rule_id:
        return rule_id
    return f"{wrap_label(title, width=34)}\n[{rule_id}]"


def _applicable(rules: pd.DataFrame, side: str) -> str:
    column = f"applicable_{side}"
    return str(int(rules[column].sum())) if column in rules.columns else "?"


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
    fig, (ax,) = new_figure(max(2.8, 0.55 * len(rules) + 1.6))
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
    ax.set_yticks(
        y,
        labels=[_rule_label(r, font) for _, r in rules.iterrows()],
        fontsize=9,
        **label_font(font),
    )
    finite = np.concatenate(
        [low[np.isfinite(low)], high[np.isfinite(high)], [-min_effect, min_effect]]
    )
    span = float(np.max(np.abs(finite))) * 1.1 if len(finite) else 10.0
    ax.set_xlim(-max(span, 10.0), max(span, 10.0))
    ax.set_ylim(-0.6, len(rules) - 0.4)
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
    present = list(dict.fromkeys(rules["direction"].astype(str)))
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
    return fig
