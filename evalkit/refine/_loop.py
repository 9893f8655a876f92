"""``refine_loop``: refine, re-run the same grid, grade, compare; stop on the first guard.

Each round sends feedback (given, or suggested from the previous round's *training* cells),
waits for the build, runs the same grid (same cells, so the same conversation ids and seeds)
on the new draft, grades it and compares it with the previous round and with prod (one prod
run at the start). A seeded share of cells is held out: never quoted in feedback, and the only
cells that decide whether a round is progress, so a prompt tuned to the training cells cannot
pass for an improvement.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final, Literal

import pandas as pd

from .._results import Result, json_records
from .._util import now, run_sync
from ..api import AsyncClient
from ..compare import Comparison
from ..flows import GradedRun, PipelineOptions, RunSpec, arun_and_grade, compare_graded
from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike
from ..grid import Grid
from ..runner import RunOptions
from ..store import Run, StoreLike
from ._clients import AnyClient, async_client
from ._feedback import suggest_feedback, validate_feedback
from ._holdout import split_holdout
from ._loop_options import RefineLoopOptions
from ._refine import arefine_and_wait
from ._result import RefineResult

__all__ = ["ROUND_COLUMNS", "SUGGEST", "RefineLoopResult", "arefine_loop", "refine_loop"]

logger = logging.getLogger("evalkit.refine")

SUGGEST: Final = "suggest"
"""Pass as ``feedback`` to write each round's feedback from the last round's training cells."""
ROUND_COLUMNS: Final = (
    "round",
    "version",
    "build_id",
    "feedback_chars",
    "conversations",
    "conversations_spent",
    "score_train",
    "score_train_low",
    "score_train_high",
    "score_holdout",
    "score_holdout_low",
    "score_holdout_high",
    "vs_previous",
    "vs_previous_train",
    "vs_prod",
    "vs_prod_train",
    "progress",
    "overfit_warning",
    "stop_reason",
)
StopReason = Literal["rounds", "target", "budget", "regression", "nothing_to_fix"]


@dataclass(frozen=True, repr=False)
class RefineLoopResult(Result):
    """A refine loop's record.

    ``rounds`` (also ``summary``): one row per round (:data:`ROUND_COLUMNS`; round 0 is the draft before any
    build); ``vs_*`` verdicts without suffix are on the held-out cells. ``runs``/``grades``:
    per round; ``refinements``: per build; ``comparisons``: per round, keyed
    ``previous``/``previous_train``/``prod``/``prod_train``.
    """

    rounds: pd.DataFrame
    stop_reason: StopReason
    training_cells: frozenset[str]
    holdout_cells: frozenset[str]
    prod_run: Run
    prod_grades: Grades
    runs: tuple[Run, ...]
    grades: tuple[Grades, ...]
    refinements: tuple[RefineResult, ...]
    comparisons: tuple[dict[str, Comparison], ...]

    @property
    def summary(self) -> pd.DataFrame:
        """One row per round (:data:`ROUND_COLUMNS`)."""
        return self.rounds

    @property
    def n(self) -> int:
        """Conversations spent, prod included."""
        return int(self.rounds["conversations_spent"].iloc[-1]) if len(self.rounds) else 0

    @property
    def verdict(self) -> str | None:
        """The last round's verdict against prod on the held-out cells (None: no round)."""
        value = self.rounds["vs_prod"].iloc[-1] if len(self.rounds) else None
        return None if value is None or pd.isna(value) else str(value)

    def headline(self) -> str:
        """Builds, why it stopped, and the held-out score where it ended."""
        if not len(self.rounds):
            return f"no round ran, stopped: {self.stop_reason}"
        last = self.rounds.iloc[-1]
        return (
            f"{len(self.refinements)} build(s), stopped: {self.stop_reason}; held-out score "
            f"{last['score_holdout']:.1f} at version {last['version']}, "
            f"{last['conversations_spent']} conversations"
        )

    def to_dict(self) -> dict[str, Any]:
        """Rounds, why it stopped, the cells, the runs and builds (JSON-ready)."""
        return {
            "stop_reason": self.stop_reason,
            "rounds": json_records(self.rounds),
            "training_cells": sorted(self.training_cells),
            "holdout_cells": sorted(self.holdout_cells),
            "prod_run_id": self.prod_run.run_id,
            "run_ids": [r.run_id for r in self.runs],
            "build_ids": [r.build_id for r in self.refinements],
            "comparisons": [
                {k: c.to_dict()["summary"] for k, c in comps.items()} for comps in self.comparisons
            ],
        }


@dataclass
class _Loop:
    """The state of one loop while it runs."""

    client: AsyncClient
    assistant_id: str
    grid: Grid
    scorecard: Scorecard
    options: RefineLoopOptions
    judge: JudgeArg
    store: StoreLike
    prefix: str
    training: frozenset[str]
    holdout: frozenset[str]
    spent: int = 0

    def fits(self, n: int) -> bool:
        cap = self.options.max_conversations
        return cap is None or self.spent + n <= cap

    @property
    def pipeline(self) -> PipelineOptions:
        return PipelineOptions(
            run=RunOptions(concurrency=self.options.concurrency, progress=False),
            min_effect=self.options.min_effect,
        )

    async def run(self, name: str, target: Literal["draft", "prod"]) -> GradedRun:
        graded = await arun_and_grade(
            self.grid,
            self.assistant_id,
            self.scorecard,
            RunSpec(target, f"{self.prefix}-{name}"),
            client=self.client,
            judge=self.judge,
            store=self.store,
            options=self.pipeline,
        )
        self.spent += len(graded.run.conversations)
        return graded

    def _compare(self, base: GradedRun, cand: GradedRun, cells: Collection[str]) -> Comparison:
        return compare_graded(base, cand, cells, options=self.pipeline)

    def row(
        self,
        index: int,
        graded: GradedRun,
        refs: tuple[GradedRun, GradedRun | None],
        refined: tuple[RefineResult | None, str],
    ) -> tuple[dict[str, Any], dict[str, Comparison]]:
        prod, previous = refs
        result, feedback = refined
        run = graded.run
        comps = {
            "prod": self._compare(prod, graded, self.holdout),
            "prod_train": self._compare(prod, graded, self.training),
        }
        if previous is not None:
            comps["previous"] = self._compare(previous, graded, self.holdout)
            comps["previous_train"] = self._compare(previous, graded, self.training)
        held, train = comps["prod"].summary.iloc[0], comps["prod_train"].summary.iloc[0]

        def verdict(key: str) -> str | None:
            return comps[key].verdict.value if key in comps else None

        progress = verdict("previous") == "improved"
        versions = run.conversations["assistant_version"].dropna()
        row = {
            "round": index,
            "version": int(versions.iloc[0]) if len(versions) else None,
            "build_id": result.build_id if result else None,
            "feedback_chars": len(feedback),
            "conversations": len(run.conversations),
            "conversations_spent": self.spent,
            "score_train": train["score_candidate"],
            "score_train_low": train["score_candidate_low"],
            "score_train_high": train["score_candidate_high"],
            "score_holdout": held["score_candidate"],
            "score_holdout_low": held["score_candidate_low"],
            "score_holdout_high": held["score_candidate_high"],
            "vs_previous": verdict("previous"),
            "vs_previous_train": verdict("previous_train"),
            "vs_prod": verdict("prod"),
            "vs_prod_train": verdict("prod_train"),
            "progress": progress if previous is not None else None,
            "overfit_warning": verdict("previous_train") == "improved" and not progress,
            "stop_reason": None,
        }
        return row, comps


def _default_prefix(assistant_id: str) -> str:
    safe = "".join(ch for ch in assistant_id if ch.isalnum())[:8]
    return f"refine-{safe}-{now().strftime('%Y%m%dT%H%M%S')}"


async def arefine_loop(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    feedback: str,
    *,
    client: AnyClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: RefineLoopOptions | None = None,
) -> RefineLoopResult:
    """Async :func:`refine_loop`."""
    opts = options or RefineLoopOptions()
    if feedback != SUGGEST:
        validate_feedback(feedback)
    training, holdout = split_holdout((c.cell_id for c in grid.cells()), opts.holdout, opts.seed)
    if opts.max_conversations is not None and opts.max_conversations < 3 * len(grid):
        raise ValueError(
            f"max_conversations={opts.max_conversations} cannot pay for the prod run, round 0 "
            f"and one round ({3 * len(grid)} conversations for this grid)"
        )
    card = Scorecard.validate(scorecard)
    async with async_client(client) as aclient:
        loop = _Loop(
            aclient,
            assistant_id,
            grid,
            card,
            opts,
            judge,
            store,
            opts.run_prefix or _default_prefix(assistant_id),
            training,
            holdout,
        )
        prod = await loop.run("prod", "prod")
        graded = await loop.run("r0", "draft")
        row, comps = loop.row(0, graded, (prod, None), (None, ""))
        rows, rounds, all_comps = [row], [graded], [comps]
        refinements: list[RefineResult] = []
        stop: StopReason = "rounds"
        for index in range(1, opts.rounds + 1):
            if not loop.fits(len(grid)):
                stop = "budget"
                break
            text = feedback
            if feedback == SUGGEST:
                text = suggest_feedback(graded.grades, exclude_cells=holdout)
                if not text:
                    stop = "nothing_to_fix"
                    break
            result = await arefine_and_wait(
                assistant_id, text, client=aclient, store=store, options=opts.refine
            )
            refinements.append(result)
            previous = graded
            graded = await loop.run(f"r{index}", "draft")
            row, comps = loop.row(index, graded, (prod, previous), (result, text))
            rows.append(row)
            rounds.append(graded)
            all_comps.append(comps)
            logger.info(
                "refine round %d: held-out %s vs previous, %s vs prod",
                index,
                row["vs_previous"],
                row["vs_prod"],
            )
            if opts.stop_on_regression and row["vs_previous"] == "regressed":
                stop = "regression"
                break
            score = row["score_holdout"]
            target = opts.target_score
            if target is not None and not math.isnan(score) and score >= target:
                stop = "target"
                break
    rows[-1]["stop_reason"] = stop
    return RefineLoopResult(
        rounds=pd.DataFrame(rows, columns=list(ROUND_COLUMNS)),
        stop_reason=stop,
        training_cells=training,
        holdout_cells=holdout,
        prod_run=prod.run,
        prod_grades=prod.grades,
        runs=tuple(g.run for g in rounds),
        grades=tuple(g.grades for g in rounds),
        refinements=tuple(refinements),
        comparisons=tuple(all_comps),
    )


def refine_loop(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    feedback: str,
    *,
    client: AnyClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: RefineLoopOptions | None = None,
) -> RefineLoopResult:
    """Refine in rounds, each measured on the same grid against the previous round and prod.

    ``feedback``: the text sent every round, or ``"suggest"`` (:data:`SUGGEST`) for
    :func:`suggest_feedback` on the previous round's training cells. Stops at the first of:
    ``options.rounds`` builds, the target held-out score, the conversation budget, a held-out
    regression against the previous round, or nothing left to fix. Works inside Jupyter.
    ``judge`` (as :func:`~evalkit.grading.grade_run`: None from the environment, False leaves
    judged rules ``na``) and ``store`` (a folder or an fsspec URL) as every flow takes them;
    every knob is in ``options`` (a :class:`RefineLoopOptions`).
    """
    return run_sync(
        lambda: arefine_loop(
            grid,
            assistant_id,
            scorecard,
            feedback,
            client=client,
            judge=judge,
            store=store,
            options=options,
        )
    )
