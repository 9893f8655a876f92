"""A caller search's confirmed pairs: each (persona, rule) pair's failure rate on the fresh
repeats with its interval, against the threshold a reported pair must be shown to exceed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ._common import add_caption, new_figure, wrap_label

__all__ = ["failure_rates"]

_REPORTED = "#c62828"
_NOT_REPORTED = "#57606a"


def failure_rates(
    findings: pd.DataFrame,
    *,
    threshold: float,
    confidence: float = 0.95,
    max_rows: int = 30,
) -> Figure:
    """One row per confirmed (persona, rule) pair of ``findings`` (``FailureSearch.findings``:
    ``persona``, ``rule_id``, ``failures``, ``decided``, ``rate``, ``rate_low``, ``rate_high``,
    ``reported``), the highest rate first: the fresh failure rate (filled when reported) with
    its exact interval, and the ``threshold`` as a dashed line; ``max_rows`` at most (the
    caption says how many were left out)."""
    frame = findings.sort_values(["reported", "rate"], ascending=[False, False], kind="stable")
    shown = frame.head(max_rows).reset_index(drop=True)
    fig, (ax,) = new_figure(max(2.6, 0.42 * len(shown) + 1.6))
    y = np.arange(len(shown))[::-1]
    rate = shown["rate"].to_numpy(dtype=np.float64)
    low = shown["rate_low"].to_numpy(dtype=np.float64)
    high = shown["rate_high"].to_numpy(dtype=np.float64)
    ax.axvline(threshold, color=_REPORTED, linewidth=1, linestyle="--")
    for i, reported in enumerate(shown["reported"].astype(bool)):
        color = _REPORTED if reported else _NOT_REPORTED
        ax.errorbar(
            [rate[i]], [y[i]], xerr=[[rate[i] - low[i]], [high[i] - rate[i]]],
            fmt="o", color=color, mfc=color if reported else "white", capsize=3, markersize=6,
        )  # fmt: skip
    labels = [
        wrap_label(f"{persona} · {rule} ({int(fails)}/{int(decided)})", 44, 2)
        for persona, rule, fails, decided in zip(
            shown["persona"], shown["rule_id"], shown["failures"], shown["decided"], strict=True
        )
    ]
    ax.set_yticks(y, labels=labels, fontsize=8)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.7, max(len(shown), 1) - 0.4)
    ax.set_xlabel("failure rate on the fresh repeats")
    reported_n = int(frame["reported"].astype(bool).sum())
    ax.set_title(
        f"Confirmed failures: {reported_n} of {len(frame)} pair(s) shown above "
        f"{threshold:.0%}\n{100 * confidence:g}% exact (Clopper-Pearson) intervals; "
        "filled: reported (Holm over the search)",
        fontsize=10,
    )
    if len(shown):
        ax.legend(
            handles=[
                Line2D([], [], marker="o", linestyle="", color=_REPORTED, label="reported"),
                Line2D([], [], marker="o", linestyle="", color=_NOT_REPORTED, mfc="white",
                       label="tested, not reported"),
                Line2D([], [], color=_REPORTED, linestyle="--", label=f"threshold {threshold:.0%}"),
            ],
            loc="lower right", fontsize=8, framealpha=0.9,
        )  # fmt: skip
    else:
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no pair was confirmed", ha="center", va="center", fontsize=10)
    left = len(frame) - len(shown)
    decided = int(frame["decided"].sum()) if len(frame) else 0
    add_caption(
        fig,
        f"n = {decided} fresh verdicts over {len(frame)} confirmed pair(s) of "
        f"{frame['persona'].nunique() if len(frame) else 0} persona(s)"
        + (f"; {left} more pair(s) left out" if left else "; none left out"),
    )
    return fig
