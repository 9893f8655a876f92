"""Plots for reports and notebooks (matplotlib; each returns a Figure, nothing is shown).

    fig = rule_forest(comparison)          # per-rule differences with adjusted intervals
    fig = arm_forest(tune_result)          # a sweep's arms against the control
    fig = agent_latency([prod_run, draft_run])  # agent answer times per side (and persona)
    fig = optimize_rounds(optimize_result) # a prompt search's candidates by round
    fig = score_trend(evalkit.history(store))  # nightly scores with intervals and verdicts
    fig = sequential_looks(result.looks, min_effect=5, max_conversations=216)  # early stop
    fig = failure_rates(search.findings, threshold=0.25)  # a caller search's confirmed pairs
    html = figure_to_img_tag(fig)          # a static <img> with a PNG data URI

Every figure is 900 px wide at 100 dpi and carries a caption with n and what was left out
(``gid`` ``CAPTION_GID``), wrapped to the figure's width; no two texts of a figure overlap.
Urdu labels are drawn only when an installed font has the letters; otherwise Latin stand-ins.
The forest plot's rule labels are texts of their own, a line each (``gid`` ``ROW_LABEL_GID``).
"""

from __future__ import annotations

from ..._util import publish
from .._frames import conversation_scores
from ._arms import arm_forest
from ._common import CAPTION_GID, ROW_LABEL_GID
from ._findings import failure_rates
from ._latency import agent_latency
from ._optimize import optimize_rounds
from ._png import figure_to_img_tag, figure_to_png
from ._rules import rule_forest
from ._runs import outcomes_by_status, turns_and_latency
from ._scores import persona_record_heatmap, score_distributions
from ._sequential import sequential_looks
from ._trend import score_trend

__all__ = [
    "CAPTION_GID",
    "ROW_LABEL_GID",
    "agent_latency",
    "arm_forest",
    "conversation_scores",
    "failure_rates",
    "figure_to_img_tag",
    "figure_to_png",
    "optimize_rounds",
    "outcomes_by_status",
    "persona_record_heatmap",
    "rule_forest",
    "score_distributions",
    "score_trend",
    "sequential_looks",
    "turns_and_latency",
]

publish(globals())
