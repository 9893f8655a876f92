"""A sequential look at two stored runs, callable from a notebook as from the command line
(``evalkit compare --sequential``): the plan the candidate run recorded (and the look it
stopped at) or a plan given, both runs graded from the cache, :func:`compare_sequential`."""

from __future__ import annotations

from .._util import run_sync
from ..compare import CompareOptions, Comparison, SequentialPlan, compare_sequential
from ..grading import JudgeArg, ScorecardLike
from ..store import Run
from ._compare_runs import agrade_both
from ._sequential import sequential_record

__all__ = ["acompare_runs_sequential", "compare_runs_sequential"]


async def acompare_runs_sequential(
    baseline_run: Run,
    candidate_run: Run,
    scorecard: ScorecardLike,
    plan: SequentialPlan | None = None,
    *,
    judge: JudgeArg = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """The async twin of :func:`compare_runs_sequential`."""
    look: int | None = None
    if plan is None:
        record = sequential_record(candidate_run)
        if record is None:
            raise ValueError(
                f"plan: run {candidate_run.run_id!r} recorded no sequential plan (it was not run "
                "in waves): give plan=SequentialPlan(...)"
            )
        plan, look = record.plan, record.stopped_at
    baseline_grades, candidate_grades = await agrade_both(
        baseline_run, candidate_run, scorecard, judge
    )
    return compare_sequential(baseline_grades, candidate_grades, plan, look, options=options)


def compare_runs_sequential(
    baseline_run: Run,
    candidate_run: Run,
    scorecard: ScorecardLike,
    plan: SequentialPlan | None = None,
    *,
    judge: JudgeArg = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """Look at two stored runs as a sequential comparison: candidate minus baseline.

    ``plan`` None: the plan the candidate run recorded when it was run in waves
    (:func:`draft_vs_prod` with ``DraftVsProdOptions(sequential=...)``), at the look it stopped
    at; a ``plan`` given: the look as many repeats as both runs have. Grades come from the
    cache as in :func:`compare_runs` (graded with ``judge`` when they are not current).
    ``Comparison.stop`` says whether the look decides (False: run the next repeat on both sides
    and look again). :func:`acompare_runs_sequential` is the async twin.
    """
    return run_sync(
        lambda: acompare_runs_sequential(
            baseline_run, candidate_run, scorecard, plan, judge=judge, options=options
        )
    )
