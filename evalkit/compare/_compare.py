"""compare_grades and compare_runs: paired by cell, repeats reduced first, then the grid."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..stats import grid_mean, minimum_detectable_effect, paired_difference
from . import _breakdowns as bd
from ._comparison import Comparison
from ._options import CompareOptions
from ._sides import REQUIRED_COLUMNS, Side, unique_values
from ._verdict import Verdict, decide

if TYPE_CHECKING:
    from ..grading import JudgeArg, ScorecardLike
    from ..store import Run

__all__ = ["compare_grades", "compare_runs"]

logger = logging.getLogger("evalkit.compare")

METHOD = "paired cell means; variance from repeats within cells; Welch t"


def _left_out(conversations: pd.DataFrame | None) -> dict[str, int]:
    """Conversations not ``done``, counted by status (empty when no frame was given)."""
    if conversations is None or conversations.empty:
        return {}
    counts = conversations.loc[conversations["status"] != "done", "status"].value_counts()
    return {str(k): int(v) for k, v in counts.sort_index().items()}


def compare_grades(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    confidence: float = 0.95,
    min_effect: float = 5.0,
    seed: int = 0,
    baseline_conversations: pd.DataFrame | None = None,
    candidate_conversations: pd.DataFrame | None = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """Compare two grades frames (``evalkit.store.GRADES_SCHEMA``): candidate minus baseline.

    A conversation's score is awarded / applicable points x 100 (``na`` and ``error`` rows are
    left out and counted, never scored as fail). Conversations are paired by ``cell_id``: each
    cell's repeats are averaged first, the grid score is the mean over the cells both sides
    have, and its interval's variance comes from the spread between repeats within cells (see
    :mod:`evalkit.stats`). The verdict follows :data:`VERDICT_RULES` from that interval and
    ``min_effect`` (points). ``*_conversations`` (columns ``conversation_id``, ``status``)
    let the summary count conversations left out by status. The method is analytic: ``seed``
    is recorded for reproducibility but nothing is drawn.
    """
    opts = options or CompareOptions()
    if min_effect < 0:
        raise ValueError("min_effect must be >= 0")
    for name, frame in (("baseline", baseline), ("candidate", candidate)):
        missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} grades lack columns {missing}")
    _warn_if_graded_differently(baseline, candidate)
    cells = unique_values(baseline["cell_id"], candidate["cell_id"])
    base = Side.build(baseline, cells, "baseline")
    cand = Side.build(candidate, cells, "candidate")
    moments = (base.cell_moments(len(cells)), cand.cell_moments(len(cells)))
    keep = (moments[0].n > 0) & (moments[1].n > 0)
    diff = paired_difference(*moments, confidence)
    verdict = Verdict(decide(diff.low, diff.high, min_effect))
    sides = [grid_mean(m.mask(keep), confidence) for m in moments]
    cells_table = bd.by_cell(base, cand, cells, moments, opts)
    left_out = {
        "baseline": _left_out(baseline_conversations),
        "candidate": _left_out(candidate_conversations),
    }
    row: dict[str, Any] = {
        "verdict": verdict.value,
        "difference": diff.estimate,
        "difference_low": diff.low,
        "difference_high": diff.high,
        "confidence": confidence,
        "min_effect": float(min_effect),
        "min_detectable_effect": minimum_detectable_effect(
            diff.se, diff.df, confidence, opts.power
        ),
        "mde_power": opts.power,
        "se": diff.se,
        "df": diff.df,
        "cells_paired": int(keep.sum()),
        "cells_unpaired": int((~keep).sum()),
    }
    for label, side, interval in (("baseline", base, sides[0]), ("candidate", cand, sides[1])):
        row[f"conversations_{label}"] = side.n_conversations
        row[f"score_{label}"] = interval.estimate
        row[f"score_{label}_low"] = interval.low
        row[f"score_{label}_high"] = interval.high
        row[f"unscored_{label}"] = int(np.isnan(side.scores).sum())
        row[f"left_out_{label}"] = sum(left_out[label].values())
        row[f"error_{label}"] = side.verdict_count("error")
        row[f"na_{label}"] = side.verdict_count("na")
    row.update({"method": METHOD, "seed": seed})
    personas = bd.personas_of_cells(base, cand, cells)
    return Comparison(
        verdict=verdict,
        summary=pd.DataFrame([row]),
        by_rule=bd.by_rule(base, cand, cells, confidence, min_effect),
        by_persona=bd.by_persona(moments, personas, confidence, min_effect),
        by_cell=cells_table,
        unpaired=bd.unpaired(cells_table),
        left_out=left_out,
    )


def _warn_if_graded_differently(baseline: pd.DataFrame, candidate: pd.DataFrame) -> None:
    """A rule graded by different graders on the two sides (say a judge on one, none on the
    other) compares apples with pears: say so."""
    if "grader" not in baseline.columns or "grader" not in candidate.columns:
        return
    sides = [frame.groupby("rule_id")["grader"].agg(frozenset) for frame in (baseline, candidate)]
    both = sides[0].index.intersection(sides[1].index)
    differ = [rule for rule in both if sides[0][rule] != sides[1][rule]]
    if differ:
        logger.warning(
            "rules graded differently on the two sides (compare with care): %s",
            "; ".join(
                f"{rule}: {sorted(sides[0][rule])} vs {sorted(sides[1][rule])}" for rule in differ
            ),
        )


def compare_runs(
    baseline_run: Run,
    candidate_run: Run,
    scorecard: ScorecardLike,
    judge: JudgeArg = None,
    *,
    confidence: float = 0.95,
    min_effect: float = 5.0,
    seed: int = 0,
    options: CompareOptions | None = None,
) -> Comparison:
    """Compare two stored runs under ``scorecard``: candidate minus baseline.

    Grades come from the cache: a run's stored grades are used when they were made with this
    very scorecard (same rubric version and rules) for every ``done`` conversation; otherwise
    the run is graded (and judge calls come from the judge's on-disk cache when the transcripts
    were judged before). Conversations left out (not ``done``) are counted per side.
    """
    from ..grading import Scorecard, grade_run

    card = Scorecard.validate(scorecard)
    graded = [grade_run(run, card, judge).frame for run in (baseline_run, candidate_run)]
    return compare_grades(
        graded[0],
        graded[1],
        confidence=confidence,
        min_effect=min_effect,
        seed=seed,
        baseline_conversations=baseline_run.conversations,
        candidate_conversations=candidate_run.conversations,
        options=options,
    )
