"""Run plots: outcomes by status, and turn counts with first-turn latency."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from numpy.typing import NDArray

from ...store import STATUSES
from .._frames import RunsLike, run_frames
from ._common import (
    SIDE_COLORS,
    STATUS_COLORS,
    add_caption,
    color_for,
    left_out_text,
    new_figure,
    wrap_label,
)

__all__ = ["outcomes_by_status", "turns_and_latency"]


def outcomes_by_status(runs: RunsLike) -> Figure:
    """A stacked bar per run: conversations by status (``done``, ``dropped``, ``error``...)."""
    frames = run_frames(runs)
    labels = list(frames)
    counts = (
        pd.DataFrame(
            {label: frame["status"].astype(str).value_counts() for label, frame in frames.items()}
        )
        .T.fillna(0)
        .astype(int)
    )
    statuses = [s for s in STATUSES if s in counts.columns]
    statuses += sorted(c for c in counts.columns if c not in statuses)
    fig, (ax,) = new_figure(max(2.4, 0.6 * len(labels) + 1.5))
    y = np.arange(len(labels))[::-1]
    left = np.zeros(len(labels))
    for status in statuses:
        values = counts.reindex(labels)[status].to_numpy(dtype=np.float64)
        bars = ax.barh(
            y, values, left=left, color=color_for(STATUS_COLORS, status), label=status, height=0.6
        )
        ax.bar_label(
            bars,
            labels=[str(int(v)) if v else "" for v in values],
            label_type="center",
            color="white",
            fontsize=9,
        )
        left += values
    ax.set_yticks(y, labels=[wrap_label(label, width=24) for label in labels])
    ax.set_xlabel("conversations")
    ax.set_title("Outcomes by status")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(loc="outside right upper", fontsize=8, frameon=False)
    ax.set_xlim(0, max(1.0, float(left.max())) * 1.02)
    total = int(left.sum())
    not_done = {
        str(k): int(v) for k, v in counts.drop(columns=["done"], errors="ignore").sum().items()
    }
    add_caption(
        fig,
        f"n = {total} conversations in {len(labels)} run(s); "
        f"{left_out_text(not_done).replace('left out', 'not done')}",
    )
    return fig


def turns_and_latency(runs: RunsLike) -> Figure:
    """Turn counts (histogram) and first-turn latency (box plot) per run, ``done`` only."""
    frames = run_frames(runs)
    fig, (turns_ax, latency_ax) = new_figure(3.4, ncols=2)
    latency: list[NDArray[np.float64]] = []
    left_out: dict[str, int] = {}
    n_done = 0
    top = max((int(f["n_turns"].max()) for f in frames.values() if len(f)), default=1)
    bins = np.arange(0.5, top + 1.5, 1.0)
    width = 1.0 / (len(frames) + 1)
    for i, (label, frame) in enumerate(frames.items()):
        status = frame["status"].astype(str)
        for key, n in status[status != "done"].value_counts().items():
            left_out[str(key)] = left_out.get(str(key), 0) + int(n)
        done = frame[status == "done"]
        n_done += len(done)
        counts, _ = np.histogram(done["n_turns"].to_numpy(dtype=np.float64), bins=bins)
        turns_ax.bar(
            bins[:-1] + (i + 0.5) * width,
            counts,
            width=width,
            align="edge",
            color=SIDE_COLORS[i % len(SIDE_COLORS)],
            label=f"{label} (n = {len(done)})",
        )
        first = done["first_turn_s"].to_numpy(dtype=np.float64)
        missing = int(np.isnan(first).sum())
        if missing:
            left_out["no first turn"] = left_out.get("no first turn", 0) + missing
        latency.append(first[~np.isnan(first)])
    turns_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    turns_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    turns_ax.set_xlabel("turns per conversation")
    turns_ax.set_ylabel("conversations")
    turns_ax.set_title("Turns (done)")
    turns_ax.legend(fontsize=8, frameon=False)
    names = [wrap_label(label, width=16) for label in frames]
    latency_ax.boxplot(latency, tick_labels=names, orientation="horizontal", widths=0.5)
    latency_ax.set_xlabel("first-turn latency (s)")
    latency_ax.set_title("First-turn latency (done)")
    latency_ax.invert_yaxis()
    add_caption(fig, f"n = {n_done} done conversations; {left_out_text(left_out)}")
    return fig
