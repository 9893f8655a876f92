"""Draft vs prod in waves: one repeat per cell on both sides, a look after each, stop early.

Wave ``k`` runs the ``k``-th repeat of every cell on prod and on the draft at once (paired by
cell). While look ``k`` grades and decides, wave ``k + 1`` is already running, so the streams
stay busy across the look; when the look stops, that wave is cancelled (its unfinished
conversations are never recorded; they are counted as ``cancelled``). Each look is the pure
:func:`~evalkit.compare.compare_sequential` on the first ``k`` repeats, so a run killed at
any moment resumes with the same looks and the same alpha spent: the looks already taken are
recomputed from the stored conversations, and nothing recorded is run again.

When the comparison stops, both runs' manifests record the plan and every look under
``"sequential"`` (read back by :func:`sequential_record`).
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._results import Result, json_records, json_value
from .._util import cancel_and_wait, gather_or_cancel, planned_stop
from ..compare import Comparison, SequentialPlan, compare_sequential, first_repeats
from ..grading import Grades, JudgeArg, Scorecard, agrade_run
from ..runner import arun_grid
from ..store import Run, StoreLike, load_run, record_in_manifest
from ._pipeline import note_flags

if TYPE_CHECKING:
    from ..api import AsyncClient, Client
    from ..grid import Grid
    from ._draft_vs_prod import DraftVsProdOptions

__all__ = ["LOOK_COLUMNS", "SequentialRun", "arun_sequential", "sequential_record"]

logger = logging.getLogger("evalkit.flows")

#: Columns of :attr:`DraftVsProd.looks`, one row per look taken.
LOOK_COLUMNS = (
    "look",
    "conversations",
    "difference",
    "difference_low",
    "difference_high",
    "se",
    "nominal_confidence",
    "alpha_spent",
    "efficacy_z",
    "futility_z",
    "z",
    "verdict",
    "stop",
    "stopped_for",
)


@dataclass(frozen=True, repr=False)
class SequentialRun(Result):
    """What a sequential draft-vs-prod did: the looks, where it stopped, what it saved.

    ``summary`` is the table of looks (:data:`LOOK_COLUMNS`, one row per look taken);
    ``headline()`` says where it stopped, why, and what it saved."""

    plan: SequentialPlan
    looks: pd.DataFrame
    max_conversations: int  # both sides, had no look stopped
    spent: int  # conversations recorded on both sides (those run ahead of the stop included)
    cancelled: int  # conversations of the next wave cancelled by the stop

    @property
    def conversations(self) -> int:
        """Conversations the deciding look rests on (both sides)."""
        return int(self.looks["conversations"].iloc[-1]) if len(self.looks) else 0

    @property
    def stopped_at(self) -> int:
        return int(self.looks["look"].iloc[-1]) if len(self.looks) else 0

    @property
    def stopped_for(self) -> str:
        return str(self.looks["stopped_for"].iloc[-1]) if len(self.looks) else ""

    @property
    def saved(self) -> float:
        """Share of the fixed design's conversations not spent."""
        return 1.0 - self.spent / self.max_conversations if self.max_conversations else 0.0

    @property
    def summary(self) -> pd.DataFrame:
        """One row per look taken (:data:`LOOK_COLUMNS`)."""
        return self.looks

    @property
    def n(self) -> int:
        """Conversations the deciding look rests on (both sides)."""
        return self.conversations

    @property
    def verdict(self) -> str | None:
        """The last look's verdict (None before any look)."""
        return str(self.looks["verdict"].iloc[-1]) if len(self.looks) else None

    @property
    def difference(self) -> float:
        """The last look's difference (candidate minus baseline, points; NaN before a look)."""
        return float(self.looks["difference"].iloc[-1]) if len(self.looks) else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """The last look's interval (low, high), at its nominal level; NaN before a look."""
        if not len(self.looks):
            return math.nan, math.nan
        last = self.looks.iloc[-1]
        return float(last["difference_low"]), float(last["difference_high"])

    def headline(self) -> str:
        """Where it stopped, why, and what it saved, in words."""
        plan = self.plan
        return (
            f"sequential ({plan.method.replace('_', '-')}, up to {plan.max_repeats} repeats): "
            f"stopped at look {self.stopped_at} of {plan.max_repeats} "
            f"({self.stopped_for or 'not stopped'}); {self.spent} of {self.max_conversations} "
            f"conversations spent ({self.saved:.0%} saved), {self.cancelled} cancelled"
        )

    def to_dict(self) -> dict[str, Any]:
        """The plan, the looks, and what was spent, saved and cancelled (JSON-ready)."""
        return {
            "plan": json_value(asdict(self.plan)),
            "looks": json_records(self.looks),
            "max_conversations": self.max_conversations,
            "spent": self.spent,
            "cancelled": self.cancelled,
        }


def _look_row(comparison: Comparison, conversations: int) -> dict[str, Any]:
    r = comparison.summary.iloc[0]
    row = {k: r[k] for k in LOOK_COLUMNS if k in r.index}
    row.update(
        conversations=conversations,
        verdict=comparison.verdict.value,
        stop=bool(comparison.stop),
    )
    return {k: row[k] for k in LOOK_COLUMNS}


def _scored_in_first(grades: Grades, look: int) -> int:
    return int(first_repeats(grades.frame, look)["conversation_id"].nunique())


def _start_wave(
    grid: Grid,
    assistant_id: str,
    client: Client | AsyncClient | None,
    store: StoreLike,
    opts: DraftVsProdOptions,
    waves: int,
) -> list[asyncio.Task[Run]]:
    """Both sides' first ``waves`` repeats, started now (resuming what is recorded)."""
    run_opts = replace(opts.run, repeats=waves)
    return [
        asyncio.create_task(
            arun_grid(
                grid,
                assistant_id,
                client=client,
                target=target,
                store=store,
                run_id=run_id,
                options=run_opts,
            )
        )
        for target, run_id in opts.sides()
    ]


async def arun_sequential(
    grid: Grid,
    assistant_id: str,
    card: Scorecard,
    *,
    client: Client | AsyncClient | None,
    judge: JudgeArg,
    store: StoreLike,
    opts: DraftVsProdOptions,
) -> tuple[tuple[Run, Run], tuple[Grades, Grades], Comparison, SequentialRun]:
    """Run the waves and look after each until a look stops (module docstring)."""
    plan = opts.sequential
    assert plan is not None
    max_repeats = plan.max_repeats or grid.repeats
    if max_repeats != grid.repeats:
        grid = grid.with_repeats(max_repeats)
    plan = replace(plan, max_repeats=max_repeats)
    rows: list[dict[str, Any]] = []
    ahead: list[asyncio.Task[Run]] = []
    stopped: str | None = None
    runs = await gather_or_cancel(_start_wave(grid, assistant_id, client, store, opts, 1))
    try:
        for look in range(1, max_repeats + 1):
            if look < max_repeats:  # keep the streams busy while this look decides
                ahead = _start_wave(grid, assistant_id, client, store, opts, look + 1)
            grades = [
                await agrade_run(
                    run, card, judge=judge, options=replace(opts.grade_options, save=False)
                )
                for run in runs
            ]
            comparison = compare_sequential(grades[0], grades[1], plan, look)
            spent = sum(_scored_in_first(g, look) for g in grades)
            rows.append(_look_row(comparison, spent))
            logger.info(
                "look %d of %d: %s", look, max_repeats, comparison.summary["reason"].iloc[0]
            )
            if comparison.stop:
                stopped = f"stopped early at look {look}"
                break
            runs, ahead = await gather_or_cancel(ahead), []
    finally:
        # a look that stopped cancels the wave ahead by plan: its progress bars end finished
        await cancel_and_wait(ahead, None if stopped is None else planned_stop(stopped))
    final = tuple(load_run(run.run_id, store=store) for run in runs)
    cancelled = _cancelled(final, grid.n_cells, look)
    # graded again to store the grades, those of conversations run ahead of the stop included;
    # the comparison stays the deciding look's
    grades = [await agrade_run(run, card, judge=judge, options=opts.grade_options) for run in final]
    record = SequentialRun(
        plan,
        pd.DataFrame(rows, columns=list(LOOK_COLUMNS)),
        2 * len(grid),
        sum(len(run.conversations) for run in final),
        cancelled,
    )
    for run in final:
        _record(run, record)
        note_flags(run)
    return (final[0], final[1]), (grades[0], grades[1]), comparison, record


def _cancelled(runs: tuple[Run, ...], cells: int, look: int) -> int:
    """Conversations of the wave after the deciding look that the stop left unrecorded."""
    return sum(max(0, cells - int((run.conversations["repeat"] == look).sum())) for run in runs)


def _record(run: Run, record: SequentialRun) -> None:
    """Write the plan and the looks into ``run``'s manifest (nothing else writes it now)."""
    run.manifest = record_in_manifest(run.path, "sequential", record.to_dict())


def sequential_record(run: Run) -> SequentialRun | None:
    """The sequential plan and looks a run recorded, or None for a fixed-design run."""
    raw = run.manifest.get("sequential")
    if not isinstance(raw, dict):
        return None
    plan = SequentialPlan(**raw["plan"])
    looks = pd.DataFrame(raw["looks"], columns=list(LOOK_COLUMNS))
    return SequentialRun(
        plan, looks, int(raw["max_conversations"]), int(raw["spent"]), int(raw["cancelled"])
    )
