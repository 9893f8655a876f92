"""The nightly trend: each run's score with its interval over time, one line per series, and
its verdicts marked (the marker's colour: against the night before; a ring: a confirmed
regression by the nightly rule; a triangle: a suspect night; a star: runs that became the
last-known-good)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import DIRECTION_COLORS, SIDE_COLORS, add_caption, color_for, new_figure

__all__ = ["score_trend"]

_LINE = "#1f5fbf"
_HEIGHT_IN = 4.2


def score_trend(
    history: pd.DataFrame, *, title: str | None = None, labels: dict[str, str] | None = None
) -> Figure:
    """A figure of :func:`evalkit.history`'s frame (one row per run; per-rule frames are
    averaged over rules first would hide intervals, so pass the per-run frame). Each series
    is its own line (``labels``: words per series id for the legend); points are placed in
    start order across series."""
    if "rule_id" in history.columns:
        raise ValueError("score_trend takes history(...) by run, not by='rule'")
    fig, (ax,) = new_figure(_HEIGHT_IN)
    frame = _ordered(history)
    x = np.arange(len(frame))
    groups = list(dict.fromkeys(frame["series"])) if "series" in frame.columns else [None]
    for i, series in enumerate(groups):
        picked = (frame["series"] == series).to_numpy() if series is not None else x >= 0
        if not picked.any():
            continue
        color = _LINE if len(groups) == 1 else SIDE_COLORS[i % len(SIDE_COLORS)]
        part = frame[picked]
        score = part["score"].to_numpy(dtype=float)
        low = part["score_low"].to_numpy(dtype=float)
        high = part["score_high"].to_numpy(dtype=float)
        name = (labels or {}).get(str(series), str(series)) if len(groups) > 1 else None
        ax.fill_between(x[picked], low, high, color=color, alpha=0.15, linewidth=0)
        ax.plot(x[picked], score, color=color, linewidth=1.5, zorder=2, label=name)
    if len(frame):
        score = frame["score"].to_numpy(dtype=float)
        high = frame["score_high"].to_numpy(dtype=float)
        _mark(ax, frame, x, (score, high))
        ax.set_xticks(x, [_label(row) for row in frame.to_dict("records")], rotation=30, ha="right")
    ax.set_ylim(0, 106)  # room above 100 for the last-known-good stars
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("score (0-100)")
    ax.set_title(title or "Score by run, with intervals", loc="left")
    ax.grid(axis="y", color="#d0d7de", linewidth=0.6)
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, names, loc="lower left", fontsize=8, ncols=3, frameon=False)
    n = frame["conversations"].sum() if len(frame) else 0
    alarms = frame["alarm"] if "alarm" in frame.columns else pd.Series([], dtype=object)
    regressions = int((alarms == "regressed").sum())
    add_caption(
        fig,
        f"{len(frame)} run(s) in {len(groups) if len(frame) else 0} series, {int(n)} graded "
        "conversation(s);\ncolour: verdict against the run before; ring: a regression confirmed "
        f"by the nightly rule ({regressions}); triangle: suspect night; star: last good",
    )
    return fig


def _ordered(history: pd.DataFrame) -> pd.DataFrame:
    frame = history.reset_index(drop=True)
    if "series" in frame.columns and frame["series"].nunique() > 1:
        frame = frame.sort_values(["started_at", "run_id"], kind="stable").reset_index(drop=True)
    return frame


def _label(row: Any) -> str:
    started = row.get("started_at")
    when = started.strftime("%m-%d %H:%M") if isinstance(started, pd.Timestamp) else ""
    return f"{row['run_id'][-18:]}\n{when}"


def _mark(ax: Any, frame: pd.DataFrame, x: Any, values: tuple[Any, Any]) -> None:
    score, high = values
    verdicts = frame["verdict_vs_previous"].astype(object).fillna("first run").astype(str)
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
    alarms = frame["alarm"] if "alarm" in frame.columns else pd.Series([None] * len(frame))
    suspect = (alarms == "suspect").to_numpy()
    if suspect.any():
        ax.scatter(
            x[suspect],
            score[suspect] - 4,
            marker="^",
            s=50,
            zorder=4,
            color=DIRECTION_COLORS["regressed"],
            label="suspect (one bad night)",
        )
    regressed = (alarms == "regressed").to_numpy()
    if regressed.any():
        ax.scatter(
            x[regressed],
            score[regressed],
            s=190,
            zorder=4,
            facecolors="none",
            edgecolors=DIRECTION_COLORS["regressed"],
            linewidths=2,
            label="regressed (confirmed)",
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
