"""The comparison's one-row summary, from the sides and the headline (no statistics here)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..stats import minimum_detectable_effect
from ._headline import Headline
from ._options import CompareOptions
from ._sides import Sides
from ._words import left_out_reason, method_sentence, reason_sentence

__all__ = ["METHOD", "summary_row"]

METHOD = (
    "paired cell means; variance from repeats within cells (pooled per side) or from cell "
    "differences, as the design allows; bounded limits (Wilson with effective n, MOVER)"
)


def summary_row(
    sides: Sides,
    head: Headline,
    options: CompareOptions,
    left_out: dict[str, dict[str, int]],
    flagged: dict[str, int],
) -> dict[str, Any]:
    """The summary's columns: verdict and reason, the interval and the decision's other
    bounds, the method, then each side's counts and score (``*_baseline``, ``*_candidate``;
    ``rules_left_out_*`` and ``points_left_out_*``: the rules its scores leave out whole)."""
    d = head.decision
    diff = d.interval
    n_paired = int(head.paired.sum())
    confidence, min_effect = options.confidence, options.min_effect
    row: dict[str, Any] = {
        "verdict": d.verdict.value,
        "reason": (
            left_out_reason(head.rules_left_out, float(np.nansum(sides.rule_points)))
            if head.refused
            else reason_sentence(d.reason, d.verdict.value, min_effect, d.bounded)
        ),
        "difference": diff.estimate,
        "difference_low": diff.low,
        "difference_high": diff.high,
        "confidence": confidence,
        "min_effect": float(min_effect),
        "non_inferior": bool(d.non_inferior),
        "non_inferiority_bound": d.non_inferiority_bound,
        "equivalence_low": d.equivalence.low,
        "equivalence_high": d.equivalence.high,
        "errors_differ": head.bounded,
        "worst_case_low": d.pessimistic.low if head.bounded else math.nan,
        "best_case_high": d.optimistic.high if head.bounded else math.nan,
        "min_detectable_effect": minimum_detectable_effect(
            diff.se, diff.df, confidence, options.power
        ),
        "mde_power": options.power,
        "se": diff.se,
        "df": diff.df,
        "method": head.method.label,
        "method_reason": method_sentence(head.method, n_paired, head.within_df),
        "cells_paired": n_paired,
        "cells_unpaired": int((~head.paired).sum()),
    }
    for i, (label, side) in enumerate(sides.labelled):
        score, in_cells = head.side_scores[i], head.moments[i].n > 0
        row[f"conversations_{label}"] = side.n_conversations
        row[f"scored_{label}"] = side.n_scored
        row[f"score_{label}"] = score.estimate
        row[f"score_{label}_low"] = score.low
        row[f"score_{label}_high"] = score.high
        row[f"unscored_{label}"] = int(np.isnan(side.scores).sum())
        row[f"left_out_{label}"] = sum(left_out[label].values())
        row[f"error_{label}"] = side.verdict_count("error")
        row[f"na_{label}"] = side.verdict_count("na")
        row[f"conversations_with_errors_{label}"] = head.with_errors[i][0]
        row[f"unpaired_cells_{label}"] = int((in_cells & ~head.paired).sum())
        row[f"flagged_{label}"] = flagged[label]
        row[f"rules_left_out_{label}"] = ", ".join(r.rule_id for r in head.rules_left_out[i])
        row[f"points_left_out_{label}"] = float(sum(r.points for r in head.rules_left_out[i]))
    row["method_summary"] = METHOD
    return row
