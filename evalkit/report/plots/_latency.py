"""Agent latency per side: the distribution of agent answer times, and by persona where the
sides differ."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...store import Run
from ._common import SIDE_COLORS, add_caption, new_figure, wrap_label

__all__ = ["agent_latency"]

#: personas whose medians differ by less than this share of the overall median are not drawn
_PERSONA_SHARE = 0.1
_MAX_PERSONAS = 8


def _agent_frame(run: Run) -> pd.DataFrame:
    """Done conversations' timed agent answers with their persona."""
    conv = run.conversations
    done = conv.loc[conv["status"] == "done", ["conversation_id", "persona_label"]]
    turns = run.turns
    timed = turns.loc[turns["latency_s"].notna(), ["conversation_id", "latency_s"]]
    return timed.merge(done, on="conversation_id", how="inner")


def _label(run: Run) -> str:
    target = run.manifest.get("target")
    return f"{target} ({run.run_id})" if target and target != run.run_id else run.run_id


def agent_latency(runs: Sequence[Run] | Mapping[str, Run]) -> Figure:
    """Agent answer times per side (a cumulative distribution with p50 and p95 marked) and,
    where some persona's median moves between the sides, those personas' box plots."""
    sides = dict(runs) if isinstance(runs, Mapping) else {_label(run): run for run in runs}
    frames = {label: _agent_frame(run) for label, run in sides.items()}
    untimed = [label for label, frame in frames.items() if frame.empty]
    frames = {label: frame for label, frame in frames.items() if not frame.empty}
    persona_rows = _personas_that_differ(frames)
    fig, axes = new_figure(3.6, ncols=2 if persona_rows else 1)
    ax = axes[0]
    for i, (label, frame) in enumerate(frames.items()):
        values = np.sort(frame["latency_s"].to_numpy(dtype=np.float64))
        color = SIDE_COLORS[i % len(SIDE_COLORS)]
        shares = np.arange(1, len(values) + 1) / len(values)
        p50, p95 = np.quantile(values, [0.5, 0.95], method="inverted_cdf")
        ax.step(
            values,
            shares,
            where="post",
            color=color,
            label=f"{label}: p50 {p50:.3g} s, p95 {p95:.3g} s",
        )
        ax.axvline(p50, color=color, linestyle=":", linewidth=1)
        ax.axvline(p95, color=color, linestyle="--", linewidth=1)
    ax.set_xlabel("agent answer time (s)")
    ax.set_ylabel("share of agent turns")
    ax.set_title("Agent latency (done conversations)")
    if frames:
        ax.legend(fontsize=8, frameon=False, loc="lower right")
    if persona_rows:
        _persona_boxes(axes[1], frames, persona_rows)
    n = {label: len(frame) for label, frame in frames.items()}
    counts = ", ".join(f"{label}: {k} agent turns" for label, k in n.items())
    note = f"; no turn timing in {', '.join(untimed)}" if untimed else ""
    add_caption(fig, f"{counts or 'no timed agent turns'}; p50 dotted, p95 dashed{note}")
    return fig


def _personas_that_differ(frames: Mapping[str, pd.DataFrame]) -> list[str]:
    if len(frames) < 2:
        return []
    medians = pd.DataFrame(
        {label: f.groupby("persona_label")["latency_s"].median() for label, f in frames.items()}
    ).dropna()
    if medians.empty:
        return []
    overall = float(
        np.nanmedian(np.concatenate([f["latency_s"].to_numpy() for f in frames.values()]))
    )
    spread = (medians.max(axis=1) - medians.min(axis=1)).sort_values(ascending=False)
    moved = spread[spread > _PERSONA_SHARE * overall]
    return [str(p) for p in moved.index[:_MAX_PERSONAS]]


def _persona_boxes(ax: Any, frames: Mapping[str, pd.DataFrame], personas: list[str]) -> None:
    width = 0.8 / len(frames)
    for i, frame in enumerate(frames.values()):
        data = [
            frame.loc[frame["persona_label"] == p, "latency_s"].to_numpy(dtype=np.float64)
            for p in personas
        ]
        positions = np.arange(len(personas)) + (i - (len(frames) - 1) / 2) * width
        boxes = ax.boxplot(
            data,
            positions=positions,
            widths=width * 0.9,
            orientation="horizontal",
            patch_artist=True,
            showfliers=False,
        )
        for patch in boxes["boxes"]:
            patch.set_facecolor(SIDE_COLORS[i % len(SIDE_COLORS)])
            patch.set_alpha(0.6)
    ax.set_yticks(np.arange(len(personas)), labels=[wrap_label(p, width=18) for p in personas])
    ax.invert_yaxis()
    ax.set_xlabel("agent answer time (s)")
    ax.set_title("Personas whose latency moved")
