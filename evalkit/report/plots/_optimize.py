"""Score by round of a prompt search: every candidate raced, and the best so far.

One column per round: each raced candidate's difference against the draft on the selection
cells with its interval (hollow when adaptive arms dropped it), the best so far joined by a
line, the confirmed winner starred. Refused candidates are counted in the caption.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ...tuning import OptimizeResult
from ._common import add_caption, new_figure

__all__ = ["optimize_rounds"]


def optimize_rounds(result: OptimizeResult) -> Figure:
    """Each round's candidates and the best so far (points against the draft)."""
    fig, (ax,) = new_figure(3.6)
    raced = result.rounds[result.rounds["status"] == "raced"]
    winner = result.winner.name if result.winner is not None else None
    ax.axhline(0.0, color="#57606a", linewidth=1)
    for row in raced.to_dict("records"):
        name = str(row["candidate"])
        diff, low, high = (
            float(row[k]) for k in ("difference", "difference_low", "difference_high")
        )
        x = float(row["round"]) + (int(name.rsplit("c", 1)[-1] or 0) % 7 - 3) * 0.06
        dropped = not pd.isna(row["dropped_at"])
        color = "#1a7f37" if name == winner else "#8c959f"
        ax.errorbar(
            [x], [diff], yerr=[[diff - low], [high - diff]],
            fmt="o", color=color, mfc="none" if dropped else color, capsize=2, markersize=5,
        )  # fmt: skip
        if name == winner:
            ax.plot([x], [diff], marker="*", color=color, markersize=14)
    progress = result.progress
    if len(progress):
        ax.plot(progress["round"], progress["best_difference"], color="#0969da", linewidth=2,
                label="best so far (selection cells)")  # fmt: skip
        ax.fill_between(progress["round"].astype(float), progress["best_low"].astype(float),
                        progress["best_high"].astype(float), color="#0969da", alpha=0.12)  # fmt: skip
        ax.set_xticks(list(progress["round"]))
        ax.set_xlim(0.5, float(progress["round"].max()) + 0.5)
        ax.legend(loc="best", fontsize=8)
    ax.set_xlabel("round")
    ax.set_ylabel("difference against the draft (points)")
    title = f"winner {winner} (confirmed on held-out cells)" if winner else "no confirmed winner"
    ax.set_title(f"Prompt search: {title}", fontsize=10)
    refused = int((result.rounds["status"] != "raced").sum())
    add_caption(
        fig,
        f"n = {result.n} conversations; {len(raced)} candidates raced, {refused} refused; "
        "selection-cell intervals, unadjusted",
    )
    return fig
