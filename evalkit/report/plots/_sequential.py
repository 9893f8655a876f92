"""A sequential comparison's looks: the interval narrowing as conversations are spent, with
the boundaries that would have stopped it (efficacy: a difference this far from zero; futility:
one this close to zero)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import DIRECTION_COLORS, add_caption, color_for, new_figure

__all__ = ["sequential_looks"]

_LINE = "#1f5fbf"


def sequential_looks(
    looks: pd.DataFrame,
    *,
    min_effect: float,
    max_conversations: int,
    title: str | None = None,
) -> Figure:
    """A figure of a sequential run's looks (``DraftVsProd.looks`` or a run's recorded
    ``sequential`` looks): the difference and its look-adjusted interval at each look, by
    conversations spent, with the efficacy boundary (``|difference| >= c_k se_k`` stops) and
    the futility boundary (``|difference| < f_k se_k`` stops)."""
    fig, (ax,) = new_figure(4.2)
    frame = looks.reset_index(drop=True)
    x = frame["conversations"].to_numpy(dtype=float)
    if len(frame):
        d = frame["difference"].to_numpy(dtype=float)
        low = frame["difference_low"].to_numpy(dtype=float)
        high = frame["difference_high"].to_numpy(dtype=float)
        se = frame["se"].to_numpy(dtype=float)
        eff = frame["efficacy_z"].to_numpy(dtype=float) * se
        fut = frame["futility_z"].to_numpy(dtype=float) * se
        ax.plot(x, eff, color="#cf222e", linewidth=1, linestyle="--", label="efficacy boundary")
        ax.plot(x, -eff, color="#cf222e", linewidth=1, linestyle="--")
        if np.any(fut > 0):
            ax.fill_between(
                x, -fut, fut, color="#57606a", alpha=0.15, linewidth=0, label="futility region"
            )
        ax.errorbar(
            x,
            d,
            yerr=[d - low, high - d],
            fmt="none",
            ecolor=_LINE,
            capsize=4,
            linewidth=1.4,
            label="interval (adjusted for looks)",
        )
        for row, xi, di in zip(frame.to_dict("records"), x, d, strict=True):
            colour = color_for(DIRECTION_COLORS, str(row["verdict"]))
            ax.scatter([xi], [di], s=50 if row["stop"] else 30, color=colour, zorder=3)
            ax.annotate(
                f"look {row['look']}",
                (xi, high[int(row["look"]) - 1]),
                fontsize=8,
                textcoords="offset points",
                xytext=(0, 5),
                ha="center",
            )
        span = float(np.nanmax(np.abs(np.concatenate([low, high, [min_effect * 2]])))) * 1.25
        ax.set_ylim(-min(span, 100), min(span, 100))
    ax.axhline(0, color="#24292f", linewidth=0.8)
    for m in (-min_effect, min_effect):
        ax.axhline(m, color="#8c959f", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, max_conversations * 1.02)
    ax.axvline(max_conversations, color="#8c959f", linewidth=0.8)
    ax.set_xlabel("conversations spent (both sides)")
    ax.set_ylabel("difference (points)")
    ax.set_title(
        title or "Sequential looks: the interval narrows until a boundary is crossed", loc="left"
    )
    ax.grid(axis="y", color="#d0d7de", linewidth=0.6)
    ax.legend(loc="lower left", fontsize=8, ncols=3, frameon=False)
    last = frame.iloc[-1] if len(frame) else None
    where = (
        f"stopped at look {int(last['look'])} ({last['stopped_for'] or 'not stopped'}) after "
        f"{int(last['conversations'])} of {max_conversations} conversations"
        if last is not None
        else "no look taken"
    )
    add_caption(
        fig,
        f"{len(frame)} look(s); {where}; dotted: the minimum effect (+-{min_effect:g}); the "
        "grey line: the fixed design's conversations",
    )
    return fig
