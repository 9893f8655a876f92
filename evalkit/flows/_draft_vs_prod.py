"""Draft vs prod in one call: the same grid on both targets, graded and compared."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._results import Result
from .._util import gather_or_cancel, markdown_text, run_sync
from ..api import AsyncClient, Client, async_client
from ..compare import (
    Comparison,
    LatencyComparison,
    LatencyUnavailableError,
    SequentialPlan,
    Verdict,
    compare_latency,
)
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

    def sides(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """(target, run id) of the baseline (prod) and the candidate (the draft)."""
        return ("prod", self.baseline_run_id), ("draft", self.candidate_run_id)

    def pipeline(self) -> PipelineOptions:
        """The run -> grade -> compare options these hold."""
        return PipelineOptions(**{f.name: getattr(self, f.name) for f in fields(PipelineOptions)})


@dataclass(frozen=True, repr=False)
class DraftVsProd(Result):
    """Both runs, their grades and the comparison (candidate = draft minus baseline = prod).

    ``headline()``, ``summary`` (one row: the two run ids, then the comparison's row) and the
    typed ``verdict``, ``difference``, ``interval`` and ``n`` are the comparison's;
    ``sequential`` (a sequential plan's run: its looks, where it stopped and what it saved) is
    None for a fixed design; ``looks`` is its table of looks.
    """

    template = "draft_vs_prod.html"

    baseline: Run
    candidate: Run
    baseline_grades: Grades
    candidate_grades: Grades
    comparison: Comparison
    scorecard: Scorecard
    sequential: SequentialRun | None = None

    @property
    def verdict(self) -> Verdict:
        return self.comparison.verdict

    @property
    def difference(self) -> float:
        """Draft minus prod, in points (see :attr:`Comparison.difference`)."""
        return self.comparison.difference

    @property
    def interval(self) -> tuple[float, float]:
        """The interval of :attr:`difference` (low, high)."""
        return self.comparison.interval

    @property
    def n(self) -> int:
        """Cells scored on both sides."""
        return self.comparison.n

    def headline(self) -> str:
        """The comparison's headline (draft minus prod)."""
        return self.comparison.headline()

    @functools.cached_property
    def latency(self) -> LatencyComparison | None:
        """Agent response time, draft against prod (:func:`~evalkit.compare.compare_latency`;
        ``regressed`` = slower); None when a run has no turn timing."""
        try:
            return compare_latency(self.baseline, self.candidate)
        except LatencyUnavailableError:
            return None

    @property
    def summary(self) -> pd.DataFrame:
        """One row: ``baseline_run_id``, ``candidate_run_id``, the comparison's row, then
        agent latency p50/p95 of both sides and its verdict (NaN without turn timing)."""
        row = self.comparison.summary.copy()
        row.insert(0, "candidate_run_id", self.candidate.run_id)
        row.insert(0, "baseline_run_id", self.baseline.run_id)
        latency = self.latency
        rows = (
            {} if latency is None else {r["quantile"]: r for r in latency.table.to_dict("records")}
        )
        for q in ("p50", "p95"):
            for side in ("baseline", "candidate"):
                row[f"latency_{q}_{side}"] = float(rows[q][side]) if q in rows else float("nan")
        row["latency_verdict"] = None if latency is None else latency.verdict.value
        return row

    def _markdown_sections(self) -> list[str]:
        """The comparison's lines and rules, then agent latency (the summary row is too wide
        for a table)."""
        sections = self.comparison._markdown_sections()
        runs = f"- runs: prod {self.baseline.run_id}, draft {self.candidate.run_id}"
        latency = self.latency
        if latency is not None:
            runs += f"\n- {markdown_text(latency.headline())}"
        return [runs, *sections]

    def to_dict(self) -> dict[str, Any]:
        """Run ids and paths, the comparison, the sequential record (JSON-ready)."""
        return {
            "baseline": {"run_id": self.baseline.run_id, "path": str(self.baseline.path)},
            "candidate": {"run_id": self.candidate.run_id, "path": str(self.candidate.path)},
            "rubric_version_id": self.scorecard.rubric_version_id,
            "comparison": self.comparison.to_dict(),
            "sequential": None if self.sequential is None else self.sequential.to_dict(),
            "latency": None if self.latency is None else self.latency.to_dict(),
        }

    def html_context(self) -> dict[str, Any]:
        return {
            **self.comparison.html_context(),
            "comparison": self.comparison,
            "sequential_headline": None if self.sequential is None else self.sequential.headline(),
            "latency": self.latency,
        }

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
    # one client for both sides and every wave: what it warns about is said once
    async with async_client(client) as aclient:
        if opts.sequential is not None:
            from ._sequential import arun_sequential

            (base, cand), (g_base, g_cand), comparison, record = await arun_sequential(
                grid, assistant_id, card, client=aclient, judge=judge, store=store, opts=opts
            )
            return DraftVsProd(base, cand, g_base, g_cand, comparison, card, record)
        # both sides at once, so their conversations meet the same service load (a latency
        # comparison of runs recorded apart would carry the drift between them)
        sides = await gather_or_cancel(
            [
                asyncio.create_task(
                    arun_and_grade(
                        grid,
                        assistant_id,
                        card,
                        RunSpec(target, run_id),
                        client=aclient,
                        judge=judge,
                        store=store,
                        options=pipeline,
                    )
                )
                for target, run_id in opts.sides()
            ]
        )
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
