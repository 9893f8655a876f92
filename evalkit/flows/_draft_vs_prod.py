"""Draft vs prod in one call: the same grid on both targets, graded and compared."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from .._util import run_sync
from ..api import AsyncClient, Client
from ..compare import CompareOptions, Comparison, SequentialPlan, compare_grades
from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike, agrade_run
from ..grid import Grid
from ..runner import RunOptions, arun_grid
from ..store import Run, StoreLike

if TYPE_CHECKING:
    from ._sequential import SequentialRun

__all__ = ["DraftVsProd", "DraftVsProdOptions", "adraft_vs_prod", "draft_vs_prod"]

logger = logging.getLogger("evalkit.flows")


@dataclass(frozen=True)
class DraftVsProdOptions:
    """How to run and judge the comparison (none of it changes what is compared).

    ``sequential``: a :class:`~evalkit.SequentialPlan` runs the grid in waves of one repeat
    per cell and stops at the first deciding look (its ``confidence`` and ``min_effect`` then
    replace these); None runs the whole grid, then compares.
    """

    baseline_run_id: str = "prod"
    candidate_run_id: str = "draft"
    run: RunOptions = field(default_factory=RunOptions)
    min_effect: float = 5.0
    confidence: float = 0.95
    judge_samples: int = 1
    compare: CompareOptions | None = None
    sequential: SequentialPlan | None = None


@dataclass(frozen=True)
class DraftVsProd:
    """Both runs, their grades and the comparison (candidate = draft minus baseline = prod).

    ``sequential`` (a sequential plan's run: its looks, where it stopped and what it saved) is
    None for a fixed design; ``looks`` is its table of looks.
    """

    baseline: Run
    candidate: Run
    baseline_grades: Grades
    candidate_grades: Grades
    comparison: Comparison
    scorecard: Scorecard
    sequential: SequentialRun | None = None

    @property
    def looks(self) -> pd.DataFrame | None:
        """One row per look of a sequential comparison (None for a fixed design)."""
        return None if self.sequential is None else self.sequential.looks


async def adraft_vs_prod(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: DraftVsProdOptions | None = None,
) -> DraftVsProd:
    """Run ``grid`` on prod and on the draft (resuming runs of the same ids), grade both with
    ``scorecard`` and compare them. The async twin of :func:`draft_vs_prod`."""
    opts = options or DraftVsProdOptions()
    card = Scorecard.validate(scorecard)
    if opts.sequential is not None:
        from ._sequential import arun_sequential

        (base, cand), (g_base, g_cand), comparison, record = await arun_sequential(
            grid, assistant_id, card, client=client, judge=judge, store=store, opts=opts
        )
        return DraftVsProd(base, cand, g_base, g_cand, comparison, card, record)
    runs: list[Run] = []
    for target, run_id in (("prod", opts.baseline_run_id), ("draft", opts.candidate_run_id)):
        logger.info("running the grid on %s as run %s", target, run_id)
        runs.append(await arun_grid(grid, assistant_id, client, target, store, run_id, opts.run))
    grades = [await agrade_run(run, card, judge, judge_samples=opts.judge_samples) for run in runs]
    comparison = compare_grades(
        grades[0].frame,
        grades[1].frame,
        confidence=opts.confidence,
        min_effect=opts.min_effect,
        baseline_conversations=runs[0].conversations,
        candidate_conversations=runs[1].conversations,
        options=opts.compare,
    )
    return DraftVsProd(runs[0], runs[1], grades[0], grades[1], comparison, card)


def draft_vs_prod(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: DraftVsProdOptions | None = None,
) -> DraftVsProd:
    """Run ``grid`` on prod and on the draft, grade both and compare (draft minus prod).

    Works in scripts and in notebooks. Prod runs on a temporary clone from evalkit's snapshot
    when the draft is ahead (see :mod:`evalkit.targets`).
    """
    return run_sync(
        lambda: adraft_vs_prod(
            grid, assistant_id, scorecard, client=client, judge=judge, store=store, options=options
        )
    )
