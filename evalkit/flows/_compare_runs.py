"""compare_runs / acompare_runs: grade two stored runs (from the cache) and compare them, and
record the look under the store (the I/O around the pure :func:`evalkit.compare.compare_grades`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Literal

import pandas as pd

from .._util import run_sync
from ..compare import CompareOptions, Comparison, LabelsArg, compare_grades
from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike, agrade_run
from ..store import Run
from ._peeking import peeking_warning, record_comparison

__all__ = ["acompare_runs", "agrade_both", "compare_runs", "record_look", "stored_labels"]


async def acompare_runs(
    baseline_run: Run,
    candidate_run: Run,
    scorecard: ScorecardLike,
    labels: LabelsArg | Literal["stored"] = None,
    *,
    judge: JudgeArg = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """The async twin of :func:`compare_runs` (both sides graded at once)."""
    opts = options or CompareOptions()
    if isinstance(labels, str) and labels != "stored":
        raise ValueError(f'labels must be a frame, a pair of frames or "stored", got {labels!r}')
    baseline_grades, candidate_grades = await agrade_both(
        baseline_run, candidate_run, scorecard, judge
    )
    comparison = compare_grades(
        baseline_grades,
        candidate_grades,
        stored_labels(baseline_run, candidate_run) if isinstance(labels, str) else labels,
        options=opts,
    )
    if not opts.record_looks:
        return comparison
    return await asyncio.to_thread(record_look, comparison, baseline_run, candidate_run)


def compare_runs(
    baseline_run: Run,
    candidate_run: Run,
    scorecard: ScorecardLike,
    labels: LabelsArg | Literal["stored"] = None,
    *,
    judge: JudgeArg = None,
    options: CompareOptions | None = None,
) -> Comparison:
    """Compare two stored runs under ``scorecard``: candidate minus baseline.

    Grades come from the cache: a run's stored grades are used when they were made with this
    very scorecard (same rubric version and rules) for every ``done`` conversation; otherwise
    the run is graded with ``judge`` (and judge calls come from the judge's on-disk cache when
    the transcripts were judged before). Conversations left out (not ``done``) are counted per
    side. Each comparison leaves a record under the store, and a comparison of runs that extend
    a pair compared before (more repeats of the same grid) warns that it is peeking
    (``CompareOptions(record_looks=False)`` turns both off). Every knob is in ``options`` (a
    :class:`~evalkit.compare.CompareOptions`). Works in scripts and notebooks
    (:func:`acompare_runs` is the async twin). ``labels="stored"`` corrects judged rules with
    the hand labels stored in the runs (PPI++, see :func:`~evalkit.compare.compare_grades`).
    """
    return run_sync(
        lambda: acompare_runs(
            baseline_run, candidate_run, scorecard, labels, judge=judge, options=options
        )
    )


async def agrade_both(
    baseline_run: Run, candidate_run: Run, scorecard: ScorecardLike, judge: JudgeArg
) -> tuple[Grades, Grades]:
    """Both runs graded at once under ``scorecard`` (stored grades reused when current)."""
    card = Scorecard.validate(scorecard)
    baseline, candidate = await asyncio.gather(
        *(agrade_run(run, card, judge=judge) for run in (baseline_run, candidate_run))
    )
    return baseline, candidate


def stored_labels(baseline_run: Run, candidate_run: Run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The hand labels stored in each run (latest per conversation and rule)."""
    return baseline_run.labels(), candidate_run.labels()


def record_look(comparison: Comparison, baseline_run: Run, candidate_run: Run) -> Comparison:
    """Record a comparison of two stored runs under their store, and add the peeking warning
    when the runs extend a pair compared before (see :mod:`evalkit.flows._peeking`)."""
    peeked = peeking_warning(baseline_run, candidate_run)
    record_comparison(baseline_run, candidate_run)
    if peeked is None:
        return comparison
    return replace(comparison, warnings=(*comparison.warnings, peeked))
