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
    rules = (*JUDGED, CHECK)
    cells, repeats, k = world.cells, world.repeats, len(rules)
    logits = np.array([_logit(rates[r]) for r, _ in rules])[:, None] + cell_effects
    p = 1 / (1 + np.exp(-logits))  # (rules, cells)
    truth = rng.random((cells, repeats, k)) < p.T[:, None, :]
    draw = rng.random((cells, repeats, k))
    flip = np.where(truth, draw < world.false_fail, draw < world.false_pass)
    judged = np.array([r != CHECK[0] for r, _ in rules])
    said = np.where(judged, truth != flip, truth)
    c, r, j = np.meshgrid(np.arange(cells), np.arange(repeats), np.arange(k), indexing="ij")
    c, r, j = c.ravel(), r.ravel(), j.ravel()
    names = np.array([name for name, _ in rules])
    points = np.array([pts for _, pts in rules])[j]
    said_flat, truth_flat = said.ravel(), truth.ravel()
    return pd.DataFrame(
        {
            "run_id": run_id,
            "conversation_id": [f"{run_id}-c{a}-r{b}" for a, b in zip(c, r, strict=True)],
            "cell_id": [f"cell{a}" for a in c],
            "persona_label": [f"persona{a % 4}" for a in c],
            "repeat": r,
            "rubric_version_id": "rv1",
            "rule_id": names[j],
            "title": names[j],
            "points": points,
            "verdict": np.where(said_flat, "pass", "fail"),
            "points_awarded": np.where(said_flat, points, 0.0),
            "grader": np.where(judged[j], "judge:test", "check:regex"),
            "truth": np.where(truth_flat, "pass", "fail"),
            "evidence_turn": 1,
        }
    )


def expected_rates(rates: dict[str, float], cell_effects: np.ndarray) -> dict[str, float]:
    """Each rule's grid pass rate: the mean over cells of the cell's pass probability."""
    rules = (*JUDGED, CHECK)
    logits = np.array([_logit(rates[r]) for r, _ in rules])[:, None] + cell_effects
    p = (1 / (1 + np.exp(-logits))).mean(axis=1)
    return {name: float(v) for (name, _), v in zip(rules, p, strict=True)}


def expected_score(rates: dict[str, float], cell_effects: np.ndarray) -> float:
    """The grid score (points): every rule applies, so points-weighted pass rates."""
    p = expected_rates(rates, cell_effects)
    return sum(points * p[name] for name, points in (*JUDGED, CHECK))


def effects(world: World, seed: int) -> np.ndarray:
    """Cell effects (rules x cells) on the logit scale, shared by both sides."""
    return np.random.default_rng([seed, 7]).normal(
        0.0, world.spread, (len(JUDGED) + 1, world.cells)
    )


def pair(
    world: World, baseline: dict[str, float], candidate: dict[str, float], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Baseline and candidate over the same cells (shared cell effects: pairing matters)."""
    rng = np.random.default_rng(seed)
    cell_effects = effects(world, seed)
    return (
        side(world, baseline, rng, "base", cell_effects),
        side(world, candidate, rng, "cand", cell_effects),
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
