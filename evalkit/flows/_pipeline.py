"""Run -> grade -> compare, written once.

``draft_vs_prod``, the refine loop (and tune and the sequential comparison, built on it) run a
grid on a target, grade the run with a scorecard and compare two graded runs through these
functions, so a change to how a run is graded or compared happens in one place::

    spec = RunSpec(target="prod", run_id="prod")
    prod = await arun_and_grade(grid, assistant_id, scorecard, spec, client=client)
    draft = await arun_and_grade(grid, assistant_id, scorecard, RunSpec("draft", "draft"))
    comparison = compare_graded(prod, draft, options=PipelineOptions(min_effect=5))
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Literal

import pandas as pd

from .._util import run_sync
from ..api import AsyncClient, Client
from ..compare import CompareOptions, Comparison, check_levels, compare_grades
from ..diagnose import record_flags, recorded_flags
from ..grading import GradeOptions, Grades, JudgeArg, ScorecardLike, agrade_run, left_out_of
from ..grid import Grid
from ..runner import RunOptions, arun_grid
from ..store import Run, StoreLike
from ..targets import Target
from ._compare_runs import record_look, stored_labels

__all__ = [
    "GradedRun",
    "PipelineOptions",
    "RunSpec",
    "arun_and_grade",
    "compare_graded",
    "run_and_grade",
]

logger = logging.getLogger("evalkit.flows")


@dataclass(frozen=True)
class RunSpec:
    """One run of the pipeline: the ``target`` (``"draft"``, ``"prod"`` or a
    :class:`~evalkit.targets.Variant`) and the ``run_id`` (None: one made from the target and
    the time; the same id resumes)."""

    target: Target = "draft"
    run_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class PipelineOptions:
    """How the pipeline runs, grades and compares; none of it changes what is compared.

    ``run``: the runner's knobs; ``judge_samples``: judge calls per judged rule (majority
    kept); ``confidence`` and ``min_effect`` (points): the comparison's; ``compare``: its
    less-used knobs. When ``compare`` is given and two whole runs are compared, its
    ``record_looks`` is honoured as :func:`~evalkit.flows.compare_runs` does (the look is
    recorded under the store, and runs that extend a pair compared before get a peeking
    warning). ``labels``: hand labels that make judged rules judge-corrected (PPI++; a
    frame, a (baseline, candidate) pair, or ``"stored"`` for the labels stored in the runs;
    see :func:`~evalkit.compare.compare_grades`).
    """

    run: RunOptions = field(default_factory=RunOptions)
    judge_samples: int = 1
    confidence: float = 0.95
    min_effect: float = 5.0
    compare: CompareOptions | None = None
    labels: pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame] | Literal["stored"] | None = field(
        default=None, compare=False
    )

    def __post_init__(self) -> None:
        if isinstance(self.labels, str) and self.labels != "stored":
            raise ValueError(
                f'labels must be a frame, a pair of frames or "stored", got {self.labels!r}'
            )
        if self.judge_samples < 1:
            raise ValueError(f"judge_samples must be at least 1, got {self.judge_samples}")
        check_levels(self.confidence, self.min_effect, type(self).__name__)

    @property
    def grade_options(self) -> GradeOptions:
        """The grading knobs: ``judge_samples``."""
        return GradeOptions(judge_samples=self.judge_samples)

    @property
    def compare_options(self) -> CompareOptions:
        """``compare`` (or the defaults) with this pipeline's ``confidence`` and ``min_effect``."""
        return replace(
            self.compare or CompareOptions(),
            confidence=self.confidence,
            min_effect=self.min_effect,
        )


@dataclass(frozen=True)
class GradedRun:
    """A run and its grades (``grades.left_out`` counts the conversations not graded)."""

    run: Run
    grades: Grades

    def cells(self, cells: Collection[str]) -> GradedRun:
        """The same run with only the grades of ``cells`` (by ``cell_id``), left-out counts
        recounted over those cells."""
        wanted = set(cells)
        frame = self.grades.frame
        conversations = self.run.conversations
        kept = conversations[conversations["cell_id"].isin(wanted)]
        grades = replace(
            self.grades,
            frame=frame[frame["cell_id"].isin(wanted)],
            left_out=left_out_of(kept),
            _scores=[],
        )
        return GradedRun(self.run, grades)


async def arun_and_grade(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    spec: RunSpec,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: PipelineOptions | None = None,
) -> GradedRun:
    """Run ``grid`` on ``spec.target`` (resuming ``spec.run_id``) and grade the run (stored
    grades are reused when current). The async twin of :func:`run_and_grade`."""
    opts = options or PipelineOptions()
    logger.info("running the grid on %s as run %s", spec.target, spec.run_id)
    run = await arun_grid(
        grid, assistant_id, spec.target, spec.run_id, client=client, store=store, options=opts.run
    )
    grades = await agrade_run(run, scorecard, judge=judge, options=opts.grade_options)
    note_flags(run)
    return GradedRun(run, grades)


def note_flags(run: Run) -> None:
    """Record the run's simulation flags in its manifest and say how many were raised, once:
    a run whose flags its manifest already holds (a sweep's next wave, a replay, a resumed
    run with nothing new) says nothing again."""
    said = recorded_flags(run) or {}
    flags = record_flags(run)
    before = {(f, c) for f, ids in (said.get("by_flag") or {}).items() for c in ids}
    now = {(str(f), str(c)) for f, c in zip(flags["flag"], flags["conversation_id"], strict=True)}
    if now - before:
        logger.warning(
            "run %s: %d conversation(s) flagged as suspect simulations (%s); see "
            "evalkit.simulation_flags(run), or leave them out with "
            "CompareOptions(exclude_flagged=...)",
            run.run_id,
            flags["conversation_id"].nunique(),
            ", ".join(f"{k}: {v}" for k, v in flags["flag"].value_counts().sort_index().items()),
        )


def run_and_grade(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    spec: RunSpec,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: PipelineOptions | None = None,
) -> GradedRun:
    """Run ``grid`` on one target and grade it; works in scripts and in notebooks."""
    return run_sync(
        lambda: arun_and_grade(
            grid,
            assistant_id,
            scorecard,
            spec,
            client=client,
            judge=judge,
            store=store,
            options=options,
        )
    )


def compare_graded(
    baseline: GradedRun,
    candidate: GradedRun,
    cells: Collection[str] | None = None,
    *,
    options: PipelineOptions | None = None,
) -> Comparison:
    """Compare two graded runs, candidate minus baseline (:func:`~evalkit.compare.compare_grades`
    with each side's left-out conversations counted). ``cells``: compare only these cells
    (held-out or training cells, say)."""
    opts = options or PipelineOptions()
    if cells is not None:
        baseline, candidate = baseline.cells(cells), candidate.cells(cells)
    comparison = compare_grades(
        baseline.grades,
        candidate.grades,
        stored_labels(baseline.run, candidate.run) if isinstance(opts.labels, str) else opts.labels,
        options=opts.compare_options,
    )
    if cells is not None or opts.compare is None or not opts.compare.record_looks:
        return comparison
    return record_look(comparison, baseline.run, candidate.run)
