"""The nightly trend: each run's score with its interval over time, and its verdicts marked
(the marker's colour: against the night before; a ring: a regression against the
last-known-good run; a star: runs that became the last-known-good)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import DIRECTION_COLORS, add_caption, color_for, new_figure

__all__ = ["score_trend"]

_LINE = "#1f5fbf"


def score_trend(history: pd.DataFrame, *, title: str | None = None) -> Figure:
    """A figure of :func:`evalkit.history`'s frame (one row per run; per-rule frames are
    averaged over rules first would hide intervals, so pass the per-run frame)."""
    if "rule_id" in history.columns:
        raise ValueError("score_trend takes history(...) by run, not by='rule'")
    fig, (ax,) = new_figure(4.2)
    frame = history.reset_index(drop=True)
    x = np.arange(len(frame))
    if len(frame):
        score = frame["score"].to_numpy(dtype=float)
        low = frame["score_low"].to_numpy(dtype=float)
        high = frame["score_high"].to_numpy(dtype=float)
        ax.fill_between(x, low, high, color=_LINE, alpha=0.15, linewidth=0, label="interval")
        ax.plot(x, score, color=_LINE, linewidth=1.5, zorder=2)
        _mark(ax, frame, x, (score, high))
        ax.set_xticks(x, [_label(row) for row in frame.to_dict("records")], rotation=30, ha="right")
    ax.set_ylim(0, 106)  # room above 100 for the last-known-good stars
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("score (0-100)")
    ax.set_title(title or "Score by run, with intervals", loc="left")
    ax.grid(axis="y", color="#d0d7de", linewidth=0.6)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="lower left", fontsize=8, ncols=3, frameon=False)
    n = frame["conversations"].sum() if len(frame) else 0
    regressions = int((frame["verdict_vs_last_good"] == "regressed").sum()) if len(frame) else 0
    add_caption(
        fig,
        f"{len(frame)} run(s), {int(n)} graded conversation(s); colour: verdict against the run "
        f"before; ring: regressed against the last-known-good run ({regressions}); star: last good",
    )
    return fig


def _label(row: Any) -> str:
    started = row.get("started_at")
    when = started.strftime("%m-%d %H:%M") if isinstance(started, pd.Timestamp) else ""
    return f"{row['run_id'][-18:]}\n{when}"


def _mark(ax: Any, frame: pd.DataFrame, x: Any, values: tuple[Any, Any]) -> None:
    score, high = values
    verdicts = frame["verdict_vs_previous"].fillna("first run").astype(str)
    for verdict in dict.fromkeys(verdicts):
        picked = (verdicts == verdict).to_numpy()
        ax.scatter(
            x[picked],
            score[picked],
            s=46,
            zorder=3,
            label=verdict.replace("_", " "),
            color=color_for(DIRECTION_COLORS, verdict),
        )
    regressed = (frame["verdict_vs_last_good"] == "regressed").to_numpy()
    if regressed.any():
        ax.scatter(
            x[regressed],
            score[regressed],
            s=190,
            zorder=4,
            facecolors="none",
            edgecolors=DIRECTION_COLORS["regressed"],
            linewidths=2,
            label="regressed vs last-known-good",
        )
    good = frame["is_last_good"].to_numpy(dtype=bool)
    if good.any():
        ax.scatter(
            x[good],
            np.minimum(high[good], 100.0) + 3,  # above the interval, never on the line
            marker="*",
            s=90,
            zorder=4,
            color="#1a7f37",
            label="last-known-good",
        )
