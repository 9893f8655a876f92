"""An independent generator of graded runs with a known truth and a judge that errs.

Written apart from the project's calibration generators: each side has ``cells`` cells x
``repeats`` repeats; rule ``r`` passes with a cell-specific probability (a logit-normal spread
around the side's rate); the judge reports a true fail as pass with ``false_pass`` and a true
pass as fail with ``false_fail``. A deterministic rule is exact. Grades frames follow
``GRADES_SCHEMA``'s columns that comparisons read, with ``truth`` beside ``verdict``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

JUDGED = (("tone", 30.0), ("resolves", 30.0))
CHECK = ("greets", 40.0)


@dataclass(frozen=True)
class World:
    cells: int = 60
    repeats: int = 5
    false_pass: float = 0.35
    false_fail: float = 0.05
    spread: float = 0.8  # logit sd of cell rates


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def side(
    world: World,
    rates: dict[str, float],
    rng: np.random.Generator,
    run_id: str,
    cell_effects: np.ndarray,
) -> pd.DataFrame:
    """One side's grades (rows: conversation x rule) with the ``truth`` column."""
    rows = []
    for c in range(world.cells):
        for k in range(world.repeats):
            cid = f"{run_id}-c{c}-r{k}"
            for j, (rule, points) in enumerate((*JUDGED, CHECK)):
                p = 1 / (1 + np.exp(-(_logit(rates[rule]) + cell_effects[j, c])))
                truth = rng.random() < p
                judged = rule != CHECK[0]
                if judged:
                    flip = rng.random() < (world.false_fail if truth else world.false_pass)
                    said = truth != flip
                else:
                    said = truth
                rows.append(
                    {
                        "run_id": run_id,
                        "conversation_id": cid,
                        "cell_id": f"cell{c}",
                        "persona_label": f"persona{c % 4}",
                        "repeat": k,
                        "rubric_version_id": "rv1",
                        "rule_id": rule,
                        "title": rule,
                        "points": points,
                        "verdict": "pass" if said else "fail",
                        "points_awarded": points if said else 0.0,
                        "grader": "judge:test" if judged else "check:regex",
                        "truth": "pass" if truth else "fail",
                        "evidence_turn": 1,
                    }
                )
    return pd.DataFrame(rows)


def pair(
    world: World, baseline: dict[str, float], candidate: dict[str, float], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Baseline and candidate over the same cells (shared cell effects: pairing matters)."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0.0, world.spread, size=(len(JUDGED) + 1, world.cells))
    return (
        side(world, baseline, rng, "base", effects),
        side(world, candidate, rng, "cand", effects),
    )


def true_frame(grades: pd.DataFrame) -> pd.DataFrame:
    """The grades a perfect judge would give."""
    out = grades.copy()
    out["verdict"] = out["truth"]
    out["points_awarded"] = np.where(out["truth"] == "pass", out["points"], 0.0)
    return out


def labels_for(queue: pd.DataFrame, grades: pd.DataFrame) -> pd.DataFrame:
    """Hand labels (the truth) on a label queue's pairs, with its probabilities."""
    truth = grades.set_index(["conversation_id", "rule_id"])["truth"]
    keys = list(zip(queue["conversation_id"], queue["rule_id"], strict=True))
    return pd.DataFrame(
        {
            "conversation_id": queue["conversation_id"],
            "rule_id": queue["rule_id"],
            "label": [truth[k] for k in keys],
            "inclusion_probability": queue["inclusion_probability"].astype(float),
        }
    )
