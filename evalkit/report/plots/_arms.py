"""The forest plot of a sweep's arms: each variant's difference against the control.

One row per arm, best first: the difference over all cells with its interval adjusted for the
number of arms (colour by verdict), and, as a hollow diamond, the difference on the held-out
cells alone (what confirmed the winner). Dropped arms say after which wave.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ...tuning import TuneResult
from ._common import DIRECTION_COLORS, add_caption, color_for, new_figure, wrap_label

__all__ = ["arm_forest"]


def _label(row: pd.Series) -> str:
    name = wrap_label(str(row["variant"]), width=28, max_lines=2)
    extra = []
    if pd.notna(row["dropped_at"]):
        extra.append(f"dropped after wave {int(row['dropped_at'])}")
    if bool(row["confirmed"]):
        extra.append("confirmed winner")
    return name + (f"\n({'; '.join(extra)})" if extra else "")


def arm_forest(result: TuneResult) -> Figure:
    """Each arm's difference against the control (points) with its adjusted interval."""
    board = result.leaderboard
    arms = board[board["role"] == "arm"].reset_index(drop=True)
    s = result.details
    min_effect = float(s.get("min_effect", 5.0))
    fig, (ax,) = new_figure(max(2.8, 0.62 * len(arms) + 1.8))
    y = np.arange(len(arms))[::-1]
    diff = arms["difference"].to_numpy(dtype=np.float64)
    low = arms["difference_low"].to_numpy(dtype=np.float64)
    high = arms["difference_high"].to_numpy(dtype=np.float64)
    held = arms["holdout_difference"].to_numpy(dtype=np.float64)
    ax.axvspan(-min_effect, min_effect, color="#d0d7de", alpha=0.5, linewidth=0)
    ax.axvline(0.0, color="#57606a", linewidth=1)
    for i, verdict in enumerate(arms["verdict"].astype(str)):
        color = color_for(DIRECTION_COLORS, verdict)
        ax.errorbar(
            [diff[i]], [y[i]], xerr=[[diff[i] - low[i]], [high[i] - diff[i]]],
            fmt="o", color=color, capsize=3, markersize=7,
        )  # fmt: skip
        if np.isfinite(held[i]):
            ax.plot([held[i]], [y[i] - 0.22], marker="D", mfc="none", color=color, markersize=6)
    ax.set_yticks(y, labels=[_label(r) for _, r in arms.iterrows()], fontsize=9)
    finite = np.concatenate([v[np.isfinite(v)] for v in (low, high, held)] + [[min_effect]])
    span = max(float(np.max(np.abs(finite))) * 1.1, 10.0)
    ax.set_xlim(-span, span)
    ax.set_ylim(-0.7, len(arms) - 0.4)
    ax.set_xlabel(f"score difference against {s.get('control', 'the control')} (points)")
    level = 100 * float(s.get("adjusted_confidence", s.get("confidence", 0.95)))
    ax.set_title(
        f"Variants against {s.get('control', 'the control')}: "
        f"{'winner ' + result.winner if result.winner else 'no confirmed winner'}\n"
        f"Bonferroni-adjusted {level:.2f}% intervals over "
        f"{s.get('arms')} arms; diamonds: held-out cells only",
        fontsize=10,
    )
    present = list(dict.fromkeys(arms["verdict"].astype(str)))
    handles: list[Artist] = [
        Line2D([], [], marker="o", linestyle="", color=color_for(DIRECTION_COLORS, v),
               label=v.replace("_", " "))
        for v in present
    ]  # fmt: skip
    handles.append(Line2D([], [], marker="D", mfc="none", linestyle="", color="#57606a",
                          label="held-out difference"))  # fmt: skip
    handles.append(Patch(color="#d0d7de", label=f"±{min_effect:g} min effect"))
    ax.legend(handles=handles, loc="best", fontsize=8, framealpha=0.9)
    control = board[board["role"] == "control"]
    n_control = int(control["conversations"].iloc[0]) if len(control) else 0
    add_caption(
        fig,
        f"n = {n_control} control conversations, {int(arms['conversations'].sum())} on "
        f"{len(arms)} arms; {s.get('cells')} cells, {s.get('holdout_cells')} held out "
        f"(seed {s.get('seed')})",
    )
    return fig
