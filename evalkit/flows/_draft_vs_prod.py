"""Draft vs prod in one call: the same grid on both targets, graded and compared."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from .._util import run_sync
from ..api import AsyncClient, Client
from ..compare import Comparison, SequentialPlan
from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike
from ..grid import Grid
from ..store import Run, StoreLike
from ._pipeline import PipelineOptions, RunSpec, arun_and_grade, compare_graded

if TYPE_CHECKING:
    from ._sequential import SequentialRun

__all__ = ["DraftVsProd", "DraftVsProdOptions", "adraft_vs_prod", "draft_vs_prod"]


@dataclass(frozen=True, kw_only=True)
class DraftVsProdOptions(PipelineOptions):
    """How to run and judge the comparison (none of it changes what is compared): the
    pipeline's options (``run``, ``judge_samples``, ``confidence``, ``min_effect``,
    ``compare``), the two runs' ids, and ``sequential``: a :class:`~evalkit.SequentialPlan`
    runs the grid in waves of one repeat per cell and stops at the first deciding look (its
    ``confidence`` and ``min_effect`` then replace these); None runs the whole grid, then
    compares."""

    baseline_run_id: str = "prod"
    candidate_run_id: str = "draft"
    sequential: SequentialPlan | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sequential is not None and not isinstance(self.sequential, SequentialPlan):
            raise TypeError(
                "DraftVsProdOptions.sequential must be a SequentialPlan (or None), got "
                f"{type(self.sequential).__name__}"
            )

    def pipeline(self) -> PipelineOptions:
        """The run -> grade -> compare options these hold."""
        return PipelineOptions(**{f.name: getattr(self, f.name) for f in fields(PipelineOptions)})


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
    pipeline = opts.pipeline()
    card = Scorecard.validate(scorecard)
    if opts.sequential is not None:
        from ._sequential import arun_sequential

        (base, cand), (g_base, g_cand), comparison, record = await arun_sequential(
            grid, assistant_id, card, client=client, judge=judge, store=store, opts=opts
        )
        return DraftVsProd(base, cand, g_base, g_cand, comparison, card, record)
    sides = [
        await arun_and_grade(
            grid,
            assistant_id,
            card,
            RunSpec(target, run_id),
            client=client,
            judge=judge,
            store=store,
            options=pipeline,
        )
        for target, run_id in (("prod", opts.baseline_run_id), ("draft", opts.candidate_run_id))
    ]
    comparison = compare_graded(sides[0], sides[1], options=pipeline)
    return DraftVsProd(
        sides[0].run, sides[1].run, sides[0].grades, sides[1].grades, comparison, card
    )


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
