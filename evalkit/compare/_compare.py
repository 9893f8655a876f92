"""compare_grades: paired by cell, repeats reduced first, then the grid (no I/O; comparing
stored runs is :func:`evalkit.flows.compare_runs`)."""

from __future__ import annotations

import logging

import pandas as pd

from ..grading import Grades, GradesLike, as_grades_frame
from ..stats import Interval, grid_mean
from . import _breakdowns as bd
from ._comparison import Comparison
from ._flagged import drop_flagged, flagged_sentence
from ._headline import Headline, decide_headline
from ._judge_correction import LabelsArg, apply_labels
from ._options import CompareOptions
from ._sides import Side, Sides, check_columns, unique_values
from ._summary import summary_row
from ._warnings import comparison_warnings

__all__ = ["compare_grades", "grades_headline", "side_score"]

logger = logging.getLogger("evalkit.compare")


def _left_out(grades: GradesLike) -> dict[str, int]:
    """Conversations of the side's run not ``done``, counted by status: what a :class:`Grades`
    knows (empty for a bare frame)."""
    return dict(grades.left_out) if isinstance(grades, Grades) else {}


def _run_size(grades: GradesLike) -> tuple[int, int] | None:
    """(left out, conversations in the run) of a :class:`Grades` (None for a bare frame)."""
    if not isinstance(grades, Grades):
        return None
    left = sum(grades.left_out.values())
    return left, grades.n_conversations + left


def compare_grades(
    baseline: GradesLike,
    candidate: GradesLike,
    labels: LabelsArg = None,
    *,
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
    ``min_effect``. ``options`` (:class:`CompareOptions`) holds every knob: ``confidence``,
    ``min_effect``, the pass^k threshold, the power of the stated minimum detectable effect,
    flagged simulations to leave out. A :class:`~evalkit.grading.Grades` brings the count of
    its run's conversations left out (not ``done``), by status, into the summary and the
    warnings (a bare frame knows none).

    One pass: the inputs are checked, both sides are built once (:class:`._sides.Sides`),
    then the headline (variance method, interval, verdict), the summary row, the breakdowns
    and the warnings read them.

    ``labels`` (hand labels: conversation_id, rule_id, label, inclusion_probability; one frame
    for both sides or a (baseline, candidate) pair) make judged rules' pass rates, the scores
    and the difference judge-corrected PPI++ estimates (:mod:`._judge_correction`);
    ``summary.judge_correction`` says whether (``ppi++``) or why not, ``by_rule`` keeps the
    judge's raw rates in ``judge_pass_rate_*``.
    """
    opts = options or CompareOptions()
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
    frames, correction = apply_labels(frames, labels, confidence=opts.confidence)
    sides = Sides.build(frames[0], frames[1])
    head = decide_headline(sides, opts.confidence, opts.min_effect)
    left_out = {"baseline": _left_out(given[0]), "candidate": _left_out(given[1])}
    row = summary_row(sides, head, opts, left_out, flagged)
    row.update(correction.summary_fields())
    by_rule = correction.patch_by_rule(bd.by_rule(sides, opts.confidence, opts.min_effect))
    by_cell = bd.by_cell(sides, head, opts)
    warnings = comparison_warnings(row, by_rule, sides, [_run_size(g) for g in given])
    return Comparison(
        verdict=head.decision.verdict,
        _summary=pd.DataFrame([row]),
        by_rule=by_rule,
        by_persona=bd.by_persona(sides, head, opts.confidence, opts.min_effect),
        by_cell=by_cell,
        unpaired=bd.unpaired(by_cell),
        left_out=left_out,
        warnings=(
            *warnings,
            *(s for s in [flagged_sentence(flagged, per_flag)] if s),
            *correction.warnings(),
        ),
    )


def grades_headline(
    baseline: pd.DataFrame, candidate: pd.DataFrame, options: CompareOptions
) -> Headline:
    """:func:`compare_grades`'s headline (``decision.verdict``, ``decision.interval``, each
    side's score) without the summary row, breakdowns and warnings: the same sides and
    decision, for callers that read only the verdict of many comparisons (a store's
    history). Bare grades frames; no labels or flags."""
    for name, frame in zip(("baseline", "candidate"), (baseline, candidate), strict=True):
        check_columns(frame, name)
    return decide_headline(Sides.build(baseline, candidate), options.confidence, options.min_effect)


def side_score(grades: pd.DataFrame, confidence: float) -> Interval:
    """One gradings' score (0-100) and interval: the grid mean of its cells (repeats
    averaged first), what :func:`compare_grades` reports as a side's ``score_*`` when the
    other side has the same cells, from this side alone (half the work of comparing it with
    itself)."""
    check_columns(grades, "grades")
    cells = unique_values(grades["cell_id"])
    moments = Side.build(grades, cells, "grades").scenarios(len(cells)).left_out
    return grid_mean(moments.mask(moments.n > 0), confidence, scale=100.0)


def _warn_if_graded_differently(baseline: pd.DataFrame, candidate: pd.DataFrame) -> None:
    """A rule graded by different graders on the two sides (say a judge on one, none on the
    other) compares apples with pears: say so."""
    if "grader" not in baseline.columns or "grader" not in candidate.columns:
        return
    sides = [_graders_by_rule(frame) for frame in (baseline, candidate)]
    differ = sorted(
        rule for rule in sides[0].keys() & sides[1].keys() if sides[0][rule] != sides[1][rule]
    )
    if differ:
        logger.warning(
            "rules graded differently on the two sides (compare with care): %s",
            "; ".join(
                f"{rule}: {sorted(sides[0][rule])} vs {sorted(sides[1][rule])}" for rule in differ
            ),
        )


def _graders_by_rule(frame: pd.DataFrame) -> dict[str, frozenset[str]]:
    """Each rule's set of graders (distinct pairs first: a grades frame has a row per
    conversation and rule)."""
    pairs = frame[["rule_id", "grader"]].drop_duplicates()
    out: dict[str, set[str]] = {}
    for rule, grader in zip(pairs["rule_id"], pairs["grader"], strict=True):
        out.setdefault(str(rule), set()).add(grader)
    return {rule: frozenset(graders) for rule, graders in out.items()}
