"""compare_grades and compare_runs: paired by cell, repeats reduced first, then the grid."""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..grading import Grades, GradesLike, as_grades_frame
from ..stats import VarianceMethod, grid_mean, minimum_detectable_effect
from . import _breakdowns as bd
from ._comparison import Comparison
from ._decision import decide_grid, errors_differ
from ._flagged import drop_flagged, flagged_sentence
from ._judge_correction import LabelsArg, apply_labels
from ._options import CompareOptions
from ._peeking import peeking_warning, record_comparison
from ._sides import REQUIRED_COLUMNS, Side, unique_values
from ._warnings import comparison_warnings
from ._words import method_sentence, reason_sentence

if TYPE_CHECKING:
    from ..grading import JudgeArg, ScorecardLike
    from ..store import Run

__all__ = ["compare_grades", "compare_runs", "record_look", "stored_labels"]

logger = logging.getLogger("evalkit.compare")

METHOD = (
    "paired cell means; variance from repeats within cells (pooled per side) or from cell "
    "differences, as the design allows; bounded limits (Wilson with effective n, MOVER)"
)


def _left_out(conversations: pd.DataFrame | None, grades: GradesLike) -> dict[str, int]:
    """Conversations not ``done``, counted by status: from ``conversations`` when given,
    else what a :class:`Grades` knows (empty for a bare frame)."""
    if conversations is None:
        return dict(grades.left_out) if isinstance(grades, Grades) else {}
    if conversations.empty:
        return {}
    counts = conversations.loc[conversations["status"] != "done", "status"].value_counts()
    return {str(k): int(v) for k, v in counts.sort_index().items()}


def compare_grades(
    baseline: GradesLike,
    candidate: GradesLike,
    *,
    confidence: float = 0.95,
    min_effect: float = 5.0,
    seed: int = 0,
    baseline_conversations: pd.DataFrame | None = None,
    candidate_conversations: pd.DataFrame | None = None,
    options: CompareOptions | None = None,
    labels: LabelsArg = None,
) -> Comparison:
    """Compare two gradings (:class:`~evalkit.grading.Grades` or grades frames,
    ``evalkit.store.GRADES_SCHEMA``): candidate minus baseline.

    A conversation's score is awarded / applicable points x 100 (``na`` and ``error`` rows are
    left out and counted, never scored as fail). Conversations are paired by ``cell_id``: each
    cell's repeats are averaged first, the grid score is the mean over the cells both sides
    have, and the interval's variance comes from the repeats within cells or, when they cannot
    carry it, from the cell differences (``summary.method`` says which and why; see
    :mod:`evalkit.stats`). The verdict reads the interval and ``min_effect`` (points), with
    judge errors bounded when they differ between the sides (:mod:`._decision`);
    ``summary.non_inferior`` says whether the candidate is not worse by more than
    ``min_effect``. ``*_conversations`` (columns ``conversation_id``, ``status``) let the
    summary count conversations left out by status (a ``Grades`` brings its own count). The method is analytic: ``seed`` is
    recorded for reproducibility but nothing is drawn.

    ``labels`` (hand labels: conversation_id, rule_id, label, inclusion_probability; one frame
    for both sides or a (baseline, candidate) pair) make judged rules' pass rates, the scores
    and the difference judge-corrected PPI++ estimates (:mod:`._judge_correction`);
    ``summary.judge_correction`` says whether (``ppi++``) or why not, ``by_rule`` keeps the
    judge's raw rates in ``judge_pass_rate_*``.
    """
    opts = options or CompareOptions()
    given = (baseline, candidate)
    baseline, candidate = as_grades_frame(baseline), as_grades_frame(candidate)
    if min_effect < 0:
        raise ValueError("min_effect must be >= 0")
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    for name, frame in (("baseline", baseline), ("candidate", candidate)):
        missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} grades lack columns {missing}")
    flagged: dict[str, int] = {"baseline": 0, "candidate": 0}
    per_flag: dict[str, int] = {}
    if opts.exclude_flagged is not None:
        baseline, candidate, flagged, per_flag = drop_flagged(
            baseline, candidate, opts.exclude_flagged
        )
    _warn_if_graded_differently(baseline, candidate)
    (baseline, candidate), correction = apply_labels((baseline, candidate), labels)
    cells = unique_values(baseline["cell_id"], candidate["cell_id"])
    base = Side.build(baseline, cells, "baseline")
    cand = Side.build(candidate, cells, "candidate")
    scenarios = (base.scenarios(len(cells)), cand.scenarios(len(cells)))
    moments = (scenarios[0].left_out, scenarios[1].left_out)
    keep = (moments[0].n > 0) & (moments[1].n > 0)
    with_errors = [
        (int((s.conversation_errors > 0).sum()), s.n_conversations) for s in (base, cand)
    ]
    bounded = bool(errors_differ(with_errors[0], with_errors[1]))
    decision = decide_grid(
        scenarios[0], scenarios[1], confidence=confidence, min_effect=min_effect, bounded=bounded
    )
    diff = decision.interval
    method = VarianceMethod(int(decision.method))
    within_df = tuple(float(np.where(keep & (m.n > 1), m.n - 1.0, 0.0).sum()) for m in moments)
    sides = [grid_mean(m.mask(keep), confidence, scale=100.0) for m in moments]
    cells_table = bd.by_cell(base, cand, cells, moments, opts)
    left_out = {
        "baseline": _left_out(baseline_conversations, given[0]),
        "candidate": _left_out(candidate_conversations, given[1]),
    }
    n_paired = int(keep.sum())
    row: dict[str, Any] = {
        "verdict": decision.verdict.value,
        "reason": reason_sentence(
            decision.reason, decision.verdict.value, min_effect, decision.bounded
        ),
        "difference": diff.estimate,
        "difference_low": diff.low,
        "difference_high": diff.high,
        "confidence": confidence,
        "min_effect": float(min_effect),
        "non_inferior": bool(decision.non_inferior),
        "non_inferiority_bound": decision.non_inferiority_bound,
        "equivalence_low": decision.equivalence.low,
        "equivalence_high": decision.equivalence.high,
        "errors_differ": bounded,
        "worst_case_low": decision.pessimistic.low if bounded else math.nan,
        "best_case_high": decision.optimistic.high if bounded else math.nan,
        "min_detectable_effect": minimum_detectable_effect(
            diff.se, diff.df, confidence, opts.power
        ),
        "mde_power": opts.power,
        "se": diff.se,
        "df": diff.df,
        "method": method.label,
        "method_reason": method_sentence(method, n_paired, (within_df[0], within_df[1])),
        "cells_paired": n_paired,
        "cells_unpaired": int((~keep).sum()),
    }
    for label, side, interval, in_cells, errs in (
        ("baseline", base, sides[0], moments[0].n > 0, with_errors[0]),
        ("candidate", cand, sides[1], moments[1].n > 0, with_errors[1]),
    ):
        row[f"conversations_{label}"] = side.n_conversations
        row[f"scored_{label}"] = side.n_scored
        row[f"score_{label}"] = interval.estimate
        row[f"score_{label}_low"] = interval.low
        row[f"score_{label}_high"] = interval.high
        row[f"unscored_{label}"] = int(np.isnan(side.scores).sum())
        row[f"left_out_{label}"] = sum(left_out[label].values())
        row[f"error_{label}"] = side.verdict_count("error")
        row[f"na_{label}"] = side.verdict_count("na")
        row[f"conversations_with_errors_{label}"] = errs[0]
        row[f"unpaired_cells_{label}"] = int((in_cells & ~keep).sum())
        row[f"flagged_{label}"] = flagged[label]
    row.update({"method_summary": METHOD, "seed": seed})
    row.update(correction.summary_fields())
    personas = bd.personas_of_cells(base, cand, cells)
    by_rule = correction.patch_by_rule(bd.by_rule(base, cand, cells, confidence, min_effect))
    return Comparison(
        verdict=decision.verdict,
        summary=pd.DataFrame([row]),
        by_rule=by_rule,
        by_persona=bd.by_persona(scenarios, personas, confidence, min_effect, bounded),
        by_cell=cells_table,
        unpaired=bd.unpaired(cells_table),
        left_out=left_out,
        warnings=tuple(
            comparison_warnings(
                row,
                by_rule,
                (base, cand),
                (baseline_conversations, candidate_conversations),
            )
        )
        + tuple(s for s in [flagged_sentence(flagged, per_flag)] if s)
        + tuple(correction.warnings()),
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
    labels: LabelsArg | Literal["stored"] = None,
) -> Comparison:
    """Compare two stored runs under ``scorecard``: candidate minus baseline.

    Grades come from the cache: a run's stored grades are used when they were made with this
    very scorecard (same rubric version and rules) for every ``done`` conversation; otherwise
    the run is graded (and judge calls come from the judge's on-disk cache when the transcripts
    were judged before). Conversations left out (not ``done``) are counted per side. Each
    comparison leaves a record under the store, and a comparison of runs that extend a pair
    compared before (more repeats of the same grid) warns that it is peeking
    (``CompareOptions(record_looks=False)`` turns both off). ``labels="stored"`` corrects
    judged rules with the hand labels stored in the runs (see :func:`compare_grades`).
    """
    from ..grading import Scorecard, grade_run

    if isinstance(labels, str) and labels != "stored":
        raise ValueError(f'labels must be a frame, a pair of frames or "stored", got {labels!r}')
    card = Scorecard.validate(scorecard)
    graded = [grade_run(run, card, judge).frame for run in (baseline_run, candidate_run)]
    comparison = compare_grades(
        graded[0],
        graded[1],
        confidence=confidence,
        min_effect=min_effect,
        seed=seed,
        baseline_conversations=baseline_run.conversations,
        candidate_conversations=candidate_run.conversations,
        options=options,
        labels=stored_labels(baseline_run, candidate_run) if isinstance(labels, str) else labels,
    )
    if not (options or CompareOptions()).record_looks:
        return comparison
    return record_look(comparison, baseline_run, candidate_run)


def stored_labels(baseline_run: Run, candidate_run: Run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The hand labels stored in each run (latest per conversation and rule)."""
    return baseline_run.labels(), candidate_run.labels()


def record_look(comparison: Comparison, baseline_run: Run, candidate_run: Run) -> Comparison:
    """Record a comparison of two stored runs under their store, and add the peeking warning
    when the runs extend a pair compared before (see :mod:`evalkit.compare._peeking`)."""
    peeked = peeking_warning(baseline_run, candidate_run)
    record_comparison(baseline_run, candidate_run)
    if peeked is None:
        return comparison
    return replace(comparison, warnings=(*comparison.warnings, peeked))
