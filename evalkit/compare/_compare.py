"""compare_grades and compare_runs: paired by cell, repeats reduced first, then the grid."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..grading import Grades, GradesLike, as_grades_frame
from . import _breakdowns as bd
from ._comparison import Comparison
from ._flagged import drop_flagged, flagged_sentence
from ._headline import decide_headline
from ._options import CompareOptions
from ._peeking import peeking_warning, record_comparison
from ._sides import Sides, check_columns
from ._summary import summary_row
from ._warnings import comparison_warnings

if TYPE_CHECKING:
    from ..grading import JudgeArg, ScorecardLike
    from ..store import Run

__all__ = ["compare_grades", "compare_runs", "record_look"]

logger = logging.getLogger("evalkit.compare")


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
    confidence: float | None = None,
    min_effect: float | None = None,
    seed: int = 0,
    baseline_conversations: pd.DataFrame | None = None,
    candidate_conversations: pd.DataFrame | None = None,
    options: CompareOptions | None = None,
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
    summary count conversations left out by status (a ``Grades`` brings its own count).

    One pass: the inputs are checked, both sides are built once (:class:`._sides.Sides`),
    then the headline (variance method, interval, verdict), the summary row, the breakdowns
    and the warnings read them.
    """
    opts = options or CompareOptions()
    if confidence is not None or min_effect is not None:
        opts = replace(
            opts,
            confidence=opts.confidence if confidence is None else confidence,
            min_effect=opts.min_effect if min_effect is None else min_effect,
        )
    given = (baseline, candidate)
    frames = [as_grades_frame(baseline), as_grades_frame(candidate)]
    for name, frame in zip(("baseline", "candidate"), frames, strict=True):
        check_columns(frame, name)
    flagged: dict[str, int] = {"baseline": 0, "candidate": 0}
    per_flag: dict[str, int] = {}
    if opts.exclude_flagged is not None:
        frames[0], frames[1], flagged, per_flag = drop_flagged(
            frames[0], frames[1], opts.exclude_flagged
        )
    _warn_if_graded_differently(frames[0], frames[1])
    sides = Sides.build(frames[0], frames[1])
    head = decide_headline(sides, opts.confidence, opts.min_effect)
    left_out = {
        "baseline": _left_out(baseline_conversations, given[0]),
        "candidate": _left_out(candidate_conversations, given[1]),
    }
    row = summary_row(sides, head, opts, left_out, flagged)
    row["seed"] = seed
    by_rule = bd.by_rule(sides, opts.confidence, opts.min_effect)
    by_cell = bd.by_cell(sides, head, opts)
    warnings = comparison_warnings(
        row, by_rule, sides, (baseline_conversations, candidate_conversations)
    )
    return Comparison(
        verdict=head.decision.verdict,
        summary=pd.DataFrame([row]),
        by_rule=by_rule,
        by_persona=bd.by_persona(sides, head, opts.confidence, opts.min_effect),
        by_cell=by_cell,
        unpaired=bd.unpaired(by_cell),
        left_out=left_out,
        warnings=(*warnings, *(s for s in [flagged_sentence(flagged, per_flag)] if s)),
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
    were judged before). Conversations left out (not ``done``) are counted per side. Each
    comparison leaves a record under the store, and a comparison of runs that extend a pair
    compared before (more repeats of the same grid) warns that it is peeking
    (``CompareOptions(record_looks=False)`` turns both off).
    """
    from ..grading import Scorecard, grade_run

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
    )
    if not (options or CompareOptions()).record_looks:
        return comparison
    return record_look(comparison, baseline_run, candidate_run)


def record_look(comparison: Comparison, baseline_run: Run, candidate_run: Run) -> Comparison:
    """Record a comparison of two stored runs under their store, and add the peeking warning
    when the runs extend a pair compared before (see :mod:`evalkit.compare._peeking`)."""
    peeked = peeking_warning(baseline_run, candidate_run)
    record_comparison(baseline_run, candidate_run)
    if peeked is None:
        return comparison
    return replace(comparison, warnings=(*comparison.warnings, peeked))
