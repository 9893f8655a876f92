"""tune / atune: run every arm against the same grid in waves, drop the clearly worse, and
decide the winner with :func:`~._compare.decide_arms`.

Each wave runs one more repeat of every cell for the control and every arm still in, all at
once with the streams shared out among them (the runner's repeat-major order and a
conversation budget bring each arm's run exactly to ``wave`` repeats per cell, so a sweep
resumed with its run prefix replays the same waves). An arm runs on a temporary clone the
runner makes from the draft (or prod) config with the arm's patch, deletes when the wave ends,
and deletes on failure and Ctrl-C too. An arm that fails (a config the service refuses, say) is
reported and left out, and the others go on; only the control's failure ends the sweep.
Drops read the selection cells only (:mod:`._adaptive`); the held-out cells come from the
grid's cell ids and the seed, before anything runs.

A confirmed winner and the control then run ``confirm_repeats`` more repeats of every cell
(the grid holds ``max_repeats + confirm_repeats`` repeats from the start, so a resumed sweep
finds them in the same runs; the race only ever reads the first ``max_repeats``), and the
winner's gain is measured on those fresh conversations alone (:mod:`._gain`). A resumed sweep
first deletes the clones its killed predecessor left (:mod:`._orphans`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._exceptions import EvalkitError
from .._util import now, run_sync
from ..api import AsyncClient, Client, as_async_client
from ..compare import (
    LatencyOptions,
    LatencyUnavailableError,
    compare_latency,
    first_repeats,
    latency_quantiles,
)
from ..flows import GradedRun, PipelineOptions, RunSpec, arun_and_grade
from ..grading import Grades, JudgeArg, Scorecard, ScorecardLike
from ..grid import Grid
from ..runner import Budget
from ..store import Run, RunNotFoundError, StoreLike, load_run
from ..targets import Target, Variant, redact_config
from ._adaptive import drop_bound_confidence, wave_drops
from ._arms_arrays import arms_arrays
from ._compare import ArmsInfo, decide_arms
from ._gain import FRESH, FreshGain, fresh_gain
from ._options import TuneOptions
from ._orphans import reap_orphans
from ._result import TuneResult
from ._split import holdout_mask
from ._variants import VariantSpec, variant_specs

__all__ = ["TuneError", "atune", "tune", "tune_run_prefix"]

logger = logging.getLogger("evalkit.tuning")

VariantsLike = str | Path | Sequence[Variant | VariantSpec]


class TuneError(EvalkitError):
    """An arm of a sweep could not run or be graded; the message names it (the cause is the
    original error: a refused config, an unreachable service, ...)."""


def _grid_with_repeats(grid: Grid, repeats: int) -> Grid:
    return Grid.from_definition({**grid.definition(), "repeats": repeats})


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)[:40]


async def _control_config(client: AsyncClient, assistant_id: str) -> tuple[dict[str, Any], int]:
    """The draft's config (credentials redacted) and its version, read before the sweep."""
    found = next((a for a in await client.list_assistants() if a.id == assistant_id), None)
    if found is None:
        raise ValueError(f"assistant_id: {assistant_id} is not in this API key's project")
    meta = await client.get_assistant_metadata(assistant_id)
    return redact_config(found.config.to_json()), int(meta.aliases.draft.version)


async def atune(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    variants: VariantsLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: TuneOptions | None = None,
) -> TuneResult:
    """The async twin of :func:`tune`."""
    opts = options or TuneOptions()
    specs = variant_specs(variants)
    control_name = opts.control_name
    if control_name in {s.variant.name for s in specs}:
        raise ValueError(f"variants: an arm is named like the control ({control_name!r})")
    card = Scorecard.validate(scorecard)
    aclient, owned = as_async_client(client)
    try:
        return await _sweep(aclient, assistant_id, specs, grid, card, judge, store, opts)
    finally:
        if owned:
            await aclient.aclose()


def tune_run_prefix() -> str:
    """``tune-YYYYmmdd-HHMMSS-<4 hex>``: a fresh sweep's run-id prefix."""
    return f"tune-{now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def _recorded(store: StoreLike, run_id: str) -> Run | None:
    """The run already in ``store`` under ``run_id`` (a sweep resumed), or None."""
    try:
        return load_run(run_id, store=store)
    except RunNotFoundError:
        return None


@dataclass
class _Sweep:
    """One sweep's state: the arms still in, their runs and grades, the waves so far."""

    client: AsyncClient
    assistant_id: str
    grid: Grid
    card: Scorecard
    judge: JudgeArg
    store: StoreLike
    opts: TuneOptions
    names: list[str]
    targets: dict[str, Target]
    run_ids: dict[str, str]
    held_out: frozenset[str]
    active: dict[str, bool] = field(default_factory=dict)
    dropped_at: dict[str, int] = field(default_factory=dict)
    runs: dict[str, Run] = field(default_factory=dict)
    grades: dict[str, Grades] = field(default_factory=dict)
    waves: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    fresh_failed: str | None = None

    @property
    def control(self) -> str:
        return self.opts.control_name

    @property
    def n_cells(self) -> int:
        return self.grid.n_cells

    async def run_wave(self, wave: int) -> None:
        """Run the control and every arm still in, at once; the streams are shared out so
        that together they keep ``run_options.concurrency`` open (at least one each)."""
        names = [self.control, *[n for n in self.names if self.active[n]]]
        each = max(1, -(-self.opts.run_options.concurrency // len(names)))
        try:
            async with asyncio.TaskGroup() as group:
                for name in names:
                    group.create_task(self.run_arm(name, wave, each), name=f"evalkit-tune-{name}")
        except* Exception as failed:  # the control's error (or a bug), as itself
            first = failed.exceptions[0]
            raise first from first.__cause__
        if len(self.failed) == len(self.targets) - 1:
            raise TuneError(f"every arm failed: {'; '.join(self.failed.values())}")

    async def run_arm(self, name: str, wave: int, concurrency: int) -> None:
        """Bring ``name``'s run to ``wave`` repeats per cell (resuming what is recorded) and
        grade it, through the run -> grade pipeline of :mod:`evalkit.flows`. An arm's error
        leaves the arm out (:meth:`leave_out`); the control's ends the sweep."""
        run = self.runs.get(name) or _recorded(self.store, self.run_ids[name])
        need = wave * self.n_cells - (0 if run is None else len(run.conversations))
        budget = Budget(max(need, 0), self.opts.run_options.budget.max_seconds)
        try:
            graded = await self._run_and_grade(name, wave, budget, concurrency)
        except EvalkitError as exc:
            message = f"{name} (run {self.run_ids[name]}) failed in wave {wave}: {exc}"
            if name == self.control:
                raise TuneError(message) from exc
            self.leave_out(name, wave, message)
            return
        self.runs[name], self.grades[name] = graded.run, graded.grades

    def leave_out(self, name: str, wave: int, message: str) -> None:
        """A failed arm stops: kept as dropped after its last whole wave, or left out of the
        leaderboard when it never finished one; the message goes to the result's warnings."""
        logger.warning("tune: %s; the other arms go on", message)
        self.failed[name] = message
        self.active[name] = False
        if name in self.grades:
            self.dropped_at[name] = wave - 1
        else:
            self.names.remove(name)

    async def _run_and_grade(
        self, name: str, wave: int, budget: Budget, concurrency: int
    ) -> GradedRun:
        return await arun_and_grade(
            self.grid,
            self.assistant_id,
            self.card,
            RunSpec(self.targets[name], self.run_ids[name]),
            client=self.client,
            judge=self.judge,
            store=self.store,
            options=PipelineOptions(
                run=replace(
                    self.opts.run_options, budget=budget, concurrency=concurrency, repeats=wave
                ),
                judge_samples=self.opts.judge_samples,
                confidence=self.opts.confidence,
                min_effect=self.opts.min_effect,
            ),
        )

    async def run_fresh(self, name: str) -> FreshGain | None:
        """Run the control and the winner ``name`` on ``confirm_repeats`` fresh repeats of
        every cell (resuming what is recorded) and measure the winner's gain on them; None,
        with a warning, when either cannot run or nothing could be scored."""
        first = self.opts.max_repeats
        total = first + self.opts.confirm_repeats
        each = max(1, -(-self.opts.run_options.concurrency // 2))
        try:
            async with asyncio.TaskGroup() as group:
                for side in (self.control, name):
                    group.create_task(
                        self._run_fresh(side, total, each), name=f"evalkit-fresh-{side}"
                    )
        except* EvalkitError as failed:
            self.fresh_failed = (
                f"the fresh repeats of {name} and {self.control} failed "
                f"({failed.exceptions[0]}); the gain is the adjusted held-out difference"
            )
        if self.fresh_failed:
            logger.warning("%s", self.fresh_failed)
            return None
        frames = [later_repeats(self.grades[n].frame, first, total) for n in (self.control, name)]
        spent = sum(
            int(self.runs[n].conversations["repeat"].between(first, total - 1).sum())
            for n in (self.control, name)
        )
        gain = fresh_gain(*frames, confidence=self.opts.confidence, conversations=spent)
        if not np.isfinite(gain.estimate):
            self.fresh_failed = (
                f"no fresh conversation of {name} or {self.control} could be scored; the gain "
                "is the adjusted held-out difference"
            )
            logger.warning("%s", self.fresh_failed)
            return None
        return gain

    async def _run_fresh(self, name: str, total: int, concurrency: int) -> None:
        run = self.runs[name]
        need = max(total * self.n_cells - len(run.conversations), 0)
        budget = Budget(need, self.opts.run_options.budget.max_seconds)
        graded = await self._run_and_grade(name, total, budget, concurrency)
        self.runs[name], self.grades[name] = graded.run, graded.grades

    def frames(self, repeats: int) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        control = first_repeats(self.grades[self.control].frame, repeats)
        return control, {n: first_repeats(self.grades[n].frame, repeats) for n in self.names}

    def drop_after(self, wave: int, level: float) -> list[str]:
        """Drop the arms clearly worse than the best after ``wave`` (selection cells only)."""
        control, arms = self.frames(wave)
        _, cells, _, _, data = arms_arrays((self.control, control), arms)
        mask = np.asarray([c in self.held_out for c in cells], dtype=bool)
        live = np.asarray([self.active[n] for n in self.names])
        dropped = wave_drops(data, mask, live, confidence=level)
        # an arm none of whose conversations could be scored (every one failed, say) only
        # spends: it goes too
        scored = np.asarray(data.arms.left_out.n).sum(axis=-1) > 0
        drops = [
            n
            for n, d, ok, on in zip(self.names, dropped, scored, live, strict=True)
            if on and (d or not ok)
        ]
        for name in drops:
            self.active[name] = False
            self.dropped_at[name] = wave
        return drops

    def left_out_warnings(self) -> list[str]:
        """One sentence per failed arm, and per arm (and the control) with conversations that
        did not end done."""
        out = [
            f"{message} (left out{'' if name in self.grades else ' of the leaderboard'})"
            for name, message in self.failed.items()
        ]
        if self.fresh_failed:
            out.append(self.fresh_failed)
        for name in [self.control, *self.names]:
            conversations = self.runs[name].conversations
            gone = conversations.loc[conversations["status"] != "done", "status"].value_counts()
            if len(gone):
                counts = ", ".join(f"{int(v)} {k}" for k, v in gone.sort_index().items())
                out.append(
                    f"{name}: {int(gone.sum())} of {len(conversations)} conversation(s) left "
                    f"out of every score ({counts}); see run {self.run_ids[name]}"
                )
        return out

    def record_wave(self, wave: int, drops: list[str]) -> None:
        for name in [self.control, *self.names]:
            if name in self.runs:
                self.waves.append(
                    {
                        "wave": wave,
                        "variant": name,
                        "conversations": int(
                            (self.runs[name].conversations["repeat"] < wave).sum()
                        ),
                        "in": name == self.control or self.active[name],
                        "dropped": name in drops,
                    }
                )


def raced(run: Run, repeats: int) -> int:
    """A run's conversations in the race's ``repeats`` waves (not a winner's fresh ones)."""
    return int((run.conversations["repeat"] < repeats).sum())


def later_repeats(frame: pd.DataFrame, start: int, stop: int) -> pd.DataFrame:
    """The rows of each cell's repeats ``start`` to ``stop - 1`` (the fresh ones)."""
    upto = first_repeats(frame, stop)
    return upto.drop(index=first_repeats(upto, start).index)


def record_fresh(board: pd.DataFrame, summary: dict[str, Any], name: str, gain: FreshGain) -> None:
    """Put the winner's fresh gain in its leaderboard row and say the gain is measured so."""
    at = board.index[board["variant"] == name]
    for key, value in gain.as_row().items():
        board.loc[at, key] = value
    board.loc[at, "fresh_conversations"] = gain.conversations
    summary["gain_method"] = FRESH
    summary["fresh_conversations"] = gain.conversations


def _timed_answers(run: Run, waves: int) -> pd.DataFrame:
    """A run's timed agent answers in its first ``waves`` repeats (done conversations), with
    their cells: the turns ``compare_latency`` takes."""
    conv = run.conversations
    keep = conv.loc[
        (conv["status"] == "done") & (conv["repeat"] < waves), ["conversation_id", "cell_id"]
    ]
    turns = run.turns[["conversation_id", "at_s", "latency_s"]]
    return turns.merge(keep, on="conversation_id", how="inner")


def add_latency_and_cost(
    board: pd.DataFrame,
    runs: Mapping[str, Run],
    control: str,
    opts: TuneOptions,
    waves: Mapping[str, int],
) -> None:
    """Agent latency p50/p95 of every arm beside its score, whether it answers slower or
    faster than the control (on the waves both ran, at the same time), and what its run cost
    (NaN without a price table)."""
    stats = {name: latency_quantiles(run) for name, run in runs.items()}
    board["latency_p50"] = [stats.get(n, {}).get("p50", np.nan) for n in board["variant"]]
    board["latency_p95"] = [stats.get(n, {}).get("p95", np.nan) for n in board["variant"]]
    verdicts = []
    for name in board["variant"]:
        if name == control or name not in runs or control not in runs:
            verdicts.append("")
            continue
        shared = waves.get(name, 0)
        try:
            result = compare_latency(
                _timed_answers(runs[control], shared),
                _timed_answers(runs[name], shared),
                options=LatencyOptions(min_effect_s=opts.latency_min_effect_s),
            )
        except LatencyUnavailableError:
            verdicts.append("")
            continue
        verdicts.append(result.verdict.value)
    board["latency_verdict"] = verdicts
    pricing = opts.run_options.pricing
    board["cost"] = [
        pricing.run_cost(runs[n]).total if pricing is not None and n in runs else np.nan
        for n in board["variant"]
    ]


async def _sweep(
    client: AsyncClient,
    assistant_id: str,
    specs: list[VariantSpec],
    grid: Grid,
    card: Scorecard,
    judge: JudgeArg,
    store: StoreLike,
    opts: TuneOptions,
) -> TuneResult:
    config, version = await _control_config(client, assistant_id)
    full = _grid_with_repeats(grid, opts.max_repeats + opts.confirm_repeats)
    cell_ids = sorted(c.cell_id for c in full.cells())
    hold = holdout_mask(cell_ids, opts.holdout, opts.seed)
    prefix = opts.run_prefix or tune_run_prefix()
    await reap_orphans(client, prefix)
    names = [s.variant.name for s in specs]
    targets: dict[str, Target] = {opts.control_name: opts.control}
    targets.update({s.variant.name: s.variant for s in specs})
    sweep = _Sweep(
        client,
        assistant_id,
        full,
        card,
        judge,
        store,
        opts,
        list(names),
        targets,
        {name: f"{prefix}-{_safe(name)}" for name in targets},
        frozenset(c for c, h in zip(cell_ids, hold, strict=True) if h),
        active=dict.fromkeys(names, True),
    )
    level = drop_bound_confidence(len(names), opts.max_repeats, opts.drop_alpha)
    logger.info(
        "tune %s: %d arm(s) and %s, %d cells (%d held out), up to %d wave(s)",
        prefix,
        len(names),
        opts.control_name,
        len(cell_ids),
        len(sweep.held_out),
        opts.max_repeats,
    )
    for wave in range(1, opts.max_repeats + 1):
        await sweep.run_wave(wave)
        drops: list[str] = []
        if opts.adaptive and wave < opts.max_repeats:
            drops = sweep.drop_after(wave, level)
            if drops:
                logger.info("tune %s: wave %d drops %s", prefix, wave, drops)
        sweep.record_wave(wave, drops)
    control, arms = sweep.frames(opts.max_repeats)
    info = ArmsInfo(
        dropped_at=sweep.dropped_at,
        conversations={n: raced(r, opts.max_repeats) for n, r in sweep.runs.items()},
        holdout_cells=sweep.held_out,
    )
    board, _, summary = decide_arms(
        (opts.control_name, control), arms, options=opts.decision, info=info
    )
    winner = summary.get("winner")
    if winner and opts.confirm_repeats:
        gain = await sweep.run_fresh(str(winner))
        if gain is not None:
            record_fresh(board, summary, str(winner), gain)
    notes = {s.variant.name: s.note for s in specs}
    board.insert(2, "description", board["variant"].map(notes).fillna(""))
    board.insert(3, "run_id", board["variant"].map(sweep.run_ids))
    waves = {name: sweep.dropped_at.get(name, opts.max_repeats) for name in sweep.runs}
    add_latency_and_cost(board, sweep.runs, opts.control_name, opts, waves)
    summary = {
        **summary,
        "failed_arms": sorted(sweep.failed),
        "run_prefix": prefix,
        "max_repeats": opts.max_repeats,
        "confirm_repeats": opts.confirm_repeats,
        "adaptive": opts.adaptive,
    }
    return TuneResult(
        leaderboard=board,
        details=summary,
        waves=pd.DataFrame(sweep.waves),
        variants={s.variant.name: s.variant for s in specs},
        control_config=config,
        assistant_id=assistant_id,
        draft_version=version,
        warnings=tuple(sweep.left_out_warnings()),
    )


def tune(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    variants: VariantsLike,
    *,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: TuneOptions | None = None,
) -> TuneResult:
    """Sweep ``variants`` (a YAML file, or :class:`~evalkit.Variant` objects) against the
    control on ``grid``, grade every arm with ``scorecard`` and return the
    :class:`TuneResult`: the leaderboard, and a winner only when it is confirmed on held-out
    cells (see :func:`compare_variants`).

    Runs go to ``store`` as ``<run_prefix>-<arm>``; each arm runs on its own temporary clone,
    deleted when each wave ends, on failure and on Ctrl-C. With ``options.adaptive`` (the
    default) arms clearly worse than the best stop spending conversations after a wave. A
    confirmed winner and the control then run ``options.confirm_repeats`` fresh repeats of
    every cell, and the winner's gain (the headline's number, ``result.difference``) is their
    difference, from conversations that played no part in choosing or confirming it. Works
    in scripts and notebooks (:func:`atune` is the async twin).
    """
    return run_sync(
        lambda: atune(
            grid,
            assistant_id,
            scorecard,
            variants,
            client=client,
            judge=judge,
            store=store,
            options=options,
        )
    )
