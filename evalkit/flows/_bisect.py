"""Bisect a regression: which change between a good run and a bad run carries it.

The changes are :func:`what_changed`'s config keys and prompt hunks between the two runs. Each
configuration tried is the good run's config with a subset of them applied, run on a temporary
clone (a :class:`~evalkit.targets.Variant` over the draft, deleted on every path out) over the
good run's grid in waves of one repeat per cell, compared after each wave with the good run's
stored grades by :func:`~evalkit.compare.compare_sequential` (its interval adjusted for the
looks); a configuration is decided as soon as that interval lies wholly on one side of half the
bad run's difference (:func:`~evalkit.flows._bisect_search.side_of`), at the last look by its
point estimate. The search halves the set
(:mod:`evalkit.flows._bisect_search`) until one change, or an interacting pair, remains. The
runs tried are kept in a scratch store, deleted at the end (the store's history stays clean).
"""

from __future__ import annotations

import logging
import math
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import pandas as pd

from .._exceptions import EvalkitError
from .._results import Result
from .._util import run_sync
from ..api import AsyncClient, Client
from ..compare import SequentialPlan, Verdict, compare_grades, compare_sequential
from ..grading import GradeOptions, JudgeArg, Scorecard, ScorecardLike, agrade_run
from ..grid import Grid
from ..runner import RunOptions, arun_grid
from ..store import Run, StoreLike, grid_identity, load_run
from ..targets import Variant
from ._bisect_search import culprit_search, side_of, worst_case_tests
from ._changes import apply_changes, changes_frame, config_of, diff_runs

__all__ = ["STEP_COLUMNS", "BisectError", "BisectOptions", "BisectResult", "abisect", "bisect"]

logger = logging.getLogger("evalkit.flows")

#: The columns of :attr:`BisectResult.steps`: one row per configuration tried.
STEP_COLUMNS = (
    "step",
    "changes",
    "conversations",
    "looks",
    "verdict",
    "difference",
    "difference_low",
    "difference_high",
    "regressed",
)


class BisectError(EvalkitError):
    """Bisect refused its input (runs that cannot be bisected, a budget too small)."""


@dataclass(frozen=True)
class BisectOptions:
    """Knobs of :func:`bisect`: the sequential ``plan`` of each configuration tried (None:
        the good run's repeats, effect 10 points), ``max_conversations`` (refused up front when
        the worst case exceeds it), ``run`` options and ``on_step`` (called with each step's row
        as it is decided; the command prints it) and ``on_start`` (called before anything runs with
    the number of changes, the expected and the worst-case conversations)."""

    plan: SequentialPlan | None = None
    max_conversations: int | None = None
    run: RunOptions = field(default_factory=lambda: RunOptions(progress=False))
    on_step: Callable[[dict[str, Any]], None] | None = None
    on_start: Callable[[int, float, int], None] | None = None

    def __post_init__(self) -> None:
        if self.max_conversations is not None and self.max_conversations < 1:
            raise ValueError(
                f"BisectOptions.max_conversations must be >= 1, got {self.max_conversations}"
            )


@dataclass(frozen=True, repr=False)
class BisectResult(Result):
    """What bisect found: ``culprit`` (the change(s) carrying the regression, as
    :func:`what_changed` rows), ``steps`` (one row per configuration tried) and the runs."""

    good_run: str
    bad_run: str
    culprit: pd.DataFrame
    steps: pd.DataFrame
    changes: int
    template: ClassVar[str] = "result.html"

    @property
    def conversations(self) -> int:
        """Conversations run, every step together."""
        return int(self.steps["conversations"].sum()) if len(self.steps) else 0

    def headline(self) -> str:
        paths = ", ".join(str(p) for p in self.culprit["path"])
        what = "an interacting pair" if len(self.culprit) > 1 else "the change"
        return (
            f"{what} that carries the regression from {self.good_run} to {self.bad_run}: "
            f"{paths} (of {self.changes} change(s); {len(self.steps)} configuration(s) tried, "
            f"{self.conversations} conversation(s))"
        )

    @property
    def summary(self) -> pd.DataFrame:
        return self.steps

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "good_run": self.good_run,
            "bad_run": self.bad_run,
            "changes": self.changes,
            "culprit": self.culprit.to_dict("records"),
            "steps": self.steps.to_dict("records"),
            "conversations": self.conversations,
        }


def _check(good: Run, bad: Run, card: Scorecard) -> tuple[pd.DataFrame, float]:
    a, b = good.manifest.get("assistant_id"), bad.manifest.get("assistant_id")
    if a != b:
        raise BisectError(
            f"bisect needs runs of one assistant: {good.run_id} ran {a}, {bad.run_id} ran {b}"
        )
    if grid_identity(good.manifest) != grid_identity(bad.manifest):
        raise BisectError(
            f"bisect needs runs of one grid: {good.run_id} and {bad.run_id} ran different grids "
            "(`evalkit history --explain BAD --against GOOD` shows how)"
        )
    grades = []
    for run in (good, bad):
        frame = run.grades(card.rubric_version_id)
        if frame.empty:
            graded = run.manifest.get("grades") or {}
            raise BisectError(
                f"run {run.run_id} is not graded with scorecard {card.rubric_version_id} "
                f"(graded with: {', '.join(graded) or 'none'}); grade both runs with the same one"
            )
        grades.append(frame)
    comparison = compare_grades(grades[0], grades[1])
    if comparison.verdict is not Verdict.REGRESSED:
        row = comparison.summary.iloc[0]
        raise BisectError(
            f"the good run {good.run_id} is not better than the bad run {bad.run_id}: "
            f"{row['difference']:+.1f} points [{row['difference_low']:+.1f}, "
            f"{row['difference_high']:+.1f}], verdict {comparison.verdict.value}; nothing to bisect"
        )
    return grades[0], float(comparison.summary.iloc[0]["difference"])


def _merge_diff(base: Mapping[str, Any], target: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch that turns ``base`` into ``target``."""
    patch: dict[str, Any] = {}
    for key in base:
        if key not in target:
            patch[key] = None
    for key, value in target.items():
        old = base.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            inner = _merge_diff(old, value)
            if inner:
                patch[key] = inner
        elif old != value:
            patch[key] = value
    return patch


@dataclass
class _Bisection:
    """One bisection's state: what the configurations run against and what they cost."""

    store: StoreLike
    good: Run
    good_grades: pd.DataFrame
    rows: list[dict[str, Any]]
    card: Scorecard
    client: Client | AsyncClient | None
    judge: JudgeArg
    plan: SequentialPlan
    opts: BisectOptions
    draft: dict[str, Any]
    midpoint: float
    steps: list[dict[str, Any]] = field(default_factory=list)

    async def regresses(self, subset: tuple[int, ...]) -> bool:
        good_config, bad_config = config_of(self.good), self._bad_config
        config = apply_changes(good_config, good_config, bad_config, [self.rows[i] for i in subset])
        step = len(self.steps) + 1
        variant = Variant(f"bisect-{step}", _merge_diff(self.draft, config))
        grid = Grid.from_definition(self.good.manifest["grid"])
        run_id = f"bisect-{self.good.run_id}-{step}"
        row: dict[str, Any] = {
            "step": step,
            "changes": ", ".join(self.rows[i]["path"] for i in subset),
        }
        comparison = None
        run: Run | None = None
        looks = self.plan.max_repeats or grid.repeats
        side: bool | None = None
        for look in range(1, looks + 1):
            run = await arun_grid(
                grid,
                str(self.good.manifest["assistant_id"]),
                client=self.client,
                target=variant,
                store=self.store,
                run_id=run_id,
                options=replace(self.opts.run, repeats=look),
            )
            grades = await agrade_run(
                run, self.card, judge=self.judge, options=GradeOptions(save=False)
            )
            comparison = compare_sequential(self.good_grades, grades.frame, self.plan, look)
            row["looks"] = look
            at = comparison.summary.iloc[0]
            side = side_of(
                float(at["difference"]),
                float(at["difference_low"]),
                float(at["difference_high"]),
                self.midpoint,
                look == looks,
            )
            if side is not None:
                break
        assert comparison is not None
        assert run is not None
        summary = comparison.summary.iloc[0]
        row |= {
            "conversations": len(run.conversations),
            "verdict": comparison.verdict.value,
            "difference": float(summary["difference"]),
            "difference_low": float(summary["difference_low"]),
            "difference_high": float(summary["difference_high"]),
            "regressed": bool(side),
        }
        self.steps.append(row)
        logger.info("bisect step %d: %s -> %s", step, row["changes"] or "(none)", row["verdict"])
        if self.opts.on_step is not None:
            self.opts.on_step(row)
        return bool(row["regressed"])

    _bad_config: dict[str, Any] = field(default_factory=dict)


async def _draft_config(client: Client | AsyncClient | None, assistant_id: str) -> dict[str, Any]:
    from ..api import AsyncClient as _Async

    if isinstance(client, _Async):
        found = [a for a in await client.list_assistants() if a.id == assistant_id]
    else:
        own = client or Client()
        found = [a for a in own.list_assistants() if a.id == assistant_id]
    if not found:
        raise BisectError(f"assistant {assistant_id} is not in this API key's project")
    return dict(found[0].config.to_json())


async def abisect(
    good_run: str,
    bad_run: str,
    scorecard: ScorecardLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: BisectOptions | None = None,
) -> BisectResult:
    """Async twin of :func:`bisect`."""
    opts = options or BisectOptions()
    card = Scorecard.validate(scorecard)
    good, bad = load_run(good_run, store=store), load_run(bad_run, store=store)
    good_grades, bad_difference = _check(good, bad, card)
    rows = [r for r in diff_runs(good, bad) if r["kind"] in ("config", "prompt")]
    if not rows:
        raise BisectError(
            f"no config or prompt change between {good_run} and {bad_run}: nothing to apply "
            "(`evalkit history --explain` lists what differs)"
        )
    grid = Grid.from_definition(good.manifest["grid"])
    plan = opts.plan or SequentialPlan(grid.repeats)
    per_step = grid.n_cells * (plan.max_repeats or grid.repeats)
    worst = worst_case_tests(len(rows)) * per_step
    expected = (
        math.ceil(1.5 * math.log2(max(len(rows), 2)))
        * plan.expected_conversations(plan.effect, grid.n_cells)
        / 2
    )
    logger.warning(
        "bisect: %d change(s); about %.0f conversation(s) expected, %d at most",
        len(rows),
        expected,
        worst,
    )
    if opts.on_start is not None:
        opts.on_start(len(rows), expected, worst)
    if opts.max_conversations is not None and worst > opts.max_conversations:
        raise BisectError(
            f"bisect of {len(rows)} change(s) may need {worst} conversations "
            f"({worst_case_tests(len(rows))} configurations x {per_step}), over the budget of "
            f"{opts.max_conversations}: raise --max-conversations or a smaller plan"
        )
    # the tried runs; deleted once the search has stopped, so after its last run has finalized
    scratch = tempfile.TemporaryDirectory(prefix="evalkit-bisect-")
    state = _Bisection(
        scratch.name, good, good_grades, rows, card, client, judge, plan, opts,
        await _draft_config(client, str(good.manifest["assistant_id"])), bad_difference / 2,
    )  # fmt: skip
    state._bad_config = config_of(bad)
    indices = list(range(len(rows)))
    try:
        found = (0,) if len(rows) == 1 else await _search(indices, state)
    finally:
        scratch.cleanup()
    culprit = changes_frame([rows[i] for i in found])
    steps = pd.DataFrame(state.steps, columns=list(STEP_COLUMNS))
    return BisectResult(good_run, bad_run, culprit, steps, len(rows))


async def _search(indices: list[int], state: _Bisection) -> tuple[int, ...]:
    """The culprit search, each configuration awaited in this task: when the task is
    cancelled (Ctrl-C), the configuration running finalizes its run and deletes its clone
    before the cancellation leaves here, so nothing writes into the scratch store after it is
    deleted."""
    search = culprit_search(indices)
    try:
        subset = next(search)
        while True:
            subset = search.send(await state.regresses(subset))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def bisect(
    good_run: str,
    bad_run: str,
    scorecard: ScorecardLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: BisectOptions | None = None,
) -> BisectResult:
    """Which change between ``good_run`` and ``bad_run`` (runs of one assistant and grid,
    graded with ``scorecard``; the good one better) carries the regression: see the module
    docstring. Each configuration runs on a temporary clone, deleted on every path out."""
    return run_sync(
        lambda: abisect(
            good_run, bad_run, scorecard, client=client, judge=judge, store=store, options=options
        )
    )
