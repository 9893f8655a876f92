"""Rules a score leaves out whole: graded, never decided, errors among them.

A conversation's score leaves out its ``na`` and ``error`` rules (awarded over applicable
points). That is right for a judge that failed on a few conversations (their errors are
counted, and a comparison bounds them), but when a rule has no ``pass`` or ``fail`` at all and
errors among its grades (a judge that never answered, say), every score omits that rule's
points: the mean is a score over the other rules, not the scorecard's score. ``Grades``
says so in its headline, and a comparison refuses a verdict resting on such a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["RuleLeftOut", "left_out_mask", "left_out_words", "rules_left_out"]


@dataclass(frozen=True, slots=True)
class RuleLeftOut:
    """A rule that no score counts: its id, its points, and its grades in ``error``."""

    rule_id: str
    points: float
    errors: int


def left_out_mask(decided: ArrayLike, errors: ArrayLike) -> NDArray[np.bool_]:
    """Per rule, from its ``pass``+``fail`` and its ``error`` counts: left out of every score
    (the one definition; a comparison applies it to its per-rule counts)."""
    return np.asarray((np.asarray(decided) == 0) & (np.asarray(errors) > 0), dtype=bool)


def rules_left_out(frame: pd.DataFrame) -> list[RuleLeftOut]:
    """The rules of a grades frame with errors and not one ``pass`` or ``fail``, by rule id."""
    if frame.empty:
        return []
    verdict = frame["verdict"].astype(str)
    per_rule = pd.DataFrame(
        {
            "rule_id": frame["rule_id"].astype(str).to_numpy(),
            "decided": verdict.isin(["pass", "fail"]).to_numpy(),
            "error": (verdict == "error").to_numpy(),
            "points": frame["points"].astype("float64").to_numpy(),
        }
    ).groupby("rule_id", sort=True)
    table = per_rule.agg(
        decided=("decided", "sum"), error=("error", "sum"), points=("points", "first")
    )
    out = table[left_out_mask(table["decided"], table["error"])]
    points = out["points"].to_numpy(dtype=np.float64)
    errors = out["error"].to_numpy(dtype=np.int64)
    return [
        RuleLeftOut(str(rule), float(points[i]), int(errors[i])) for i, rule in enumerate(out.index)
    ]


def left_out_words(rules: Sequence[RuleLeftOut], total_points: float) -> str:
    """``confirms-slot (40 of 100 points; no pass or fail, 40 errors)``: the rules left out,
    for a headline or a reason."""
    ids = ", ".join(r.rule_id for r in rules)
    points = sum(r.points for r in rules)
    errors = sum(r.errors for r in rules)
    return f"{ids} ({points:g} of {total_points:g} points; no pass or fail, {errors} errors)"
