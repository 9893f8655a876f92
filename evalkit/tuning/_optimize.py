"""optimize / aoptimize: propose prompts from the current best's failures, race them with
tuning's adaptive arms, carry the best forward, and keep a winner only when the held-out cells
confirm it against the draft.

Each round reads the current best's failures on the **selection cells** (failure clusters,
judge rationales, evidence turns; :mod:`._failures`), asks the proposer for candidate prompts,
refuses the ones that cannot run (:mod:`._candidates`, before any conversation), and races the
rest against the draft on the whole grid in waves (:class:`evalkit.tuning._tune._Sweep`: drops
read the selection cells only). The current best is the candidate with the highest
selection-cell difference against the draft over every round so far (the draft while none is
above it). The draft runs once, in the first round, and is the control of every race.

The final decision is :func:`~._compare.decide_arms` over **every candidate raced in every
round**: the candidate to confirm is the best on the selection cells, and it is called
``improved`` only when a closed test rejects every intersection hypothesis holding it, each by
the inverse-normal combination of a Bonferroni p-value over all the candidates on the
selection cells and its own p-value on the held-out cells (Bretz et al. 2006), with a positive
held-out difference. Adding rounds only adds arms to the Bonferroni count, so a proposer whose
edits change nothing gives a confirmed winner in at most ``(1 - confidence) / 2`` of searches
whatever the rounds and candidates (``tests/tune/test_optimize_calibration.py``). The
winner's gain is then measured on ``confirm_repeats`` fresh repeats of every cell, run for it
and the draft (:mod:`._gain`): its selection-cell and held-out differences, read after it won,
overstate it.

A proposal is counted as malformed and dropped when it is not text (a lone surrogate), and
normalised and checked before anything runs (:mod:`._candidates`).

Runs go to the store as ``<prefix>-draft`` and ``<prefix>-r<round>-c<i>``; each round's
request, proposals and refusals go to ``<store>/.optimize/<prefix>/round-<nn>.json``. The same
prefix resumes: a finished round is neither proposed again nor run again, and the clones a
killed predecessor left are deleted first (:mod:`._orphans`).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd

from .._util import now, run_sync
from ..api import AsyncClient, Client, as_async_client
from ..grading import JudgeArg, Scorecard, ScorecardLike
from ..grid import Grid
from ..stats import paired_grid
from ..store import StoreLike, open_store
from ..targets import Target, Variant
from ._adaptive import drop_bound_confidence
from ._arms_arrays import arms_arrays
from ._candidates import check_candidate, clean_prompt, clean_text, is_text, needed_tokens
from ._compare import ArmsInfo, decide_arms
from ._failures import failing_rules
from ._gain import FreshGain
from ._optimize_options import OptimizeOptions
from ._optimize_result import OptimizeResult
from ._options import TuneOptions
from ._orphans import reap_orphans
from ._proposer import Proposal, ProposalBatch
from ._proposer_prompt import ProposalRequest
from ._split import holdout_mask
from ._tune import TuneError, _control_config, _grid_with_repeats, _Sweep, record_fresh
from ._tune import raced as raced_in

__all__ = ["CandidateSource", "aoptimize", "optimize"]

logger = logging.getLogger("evalkit.tuning.optimize")

DRAFT = "draft"


class CandidateSource(Protocol):
    """What :func:`optimize` asks for candidates: :class:`~evalkit.tuning.Proposer` or any
    object with ``apropose(request) -> ProposalBatch`` and ``describe() -> dict``."""

    async def apropose(self, request: ProposalRequest) -> ProposalBatch: ...

    def describe(self) -> dict[str, Any]: ...


ProposerArg = CandidateSource | Literal["refine"]


class _RoundSweep(_Sweep):
    """A round's race: the draft (already run to the end in an earlier round) is not run again;
    the draft alone (before the first round) is a race of no candidates."""

    async def run_wave(self, wave: int) -> None:
        if not self.names:
            await self.run_arm(self.control, wave, self.opts.run_options.concurrency)
            return
        await super().run_wave(wave)

    async def run_arm(self, name: str, wave: int, concurrency: int) -> None:
        run = self.runs.get(name)
        if (
            run is not None
            and name in self.grades
            and len(run.conversations) >= wave * self.n_cells
        ):
            return
        await super().run_arm(name, wave, concurrency)


@dataclass
class _Search:
    """The whole search's state across rounds."""

    client: AsyncClient
    assistant_id: str
    grid: Grid
    card: Scorecard
    judge: JudgeArg
    store: StoreLike
    opts: OptimizeOptions
    proposer: CandidateSource
    prefix: str
    held_out: frozenset[str]
    draft_instructions: str
    records: list[Mapping[str, Any] | None]
    keep: set[str]
    progress: Callable[[Mapping[str, Any]], None] | None = None
    sweep_state: dict[str, Any] = field(default_factory=dict)
    variants: dict[str, Variant] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)
    round_of: dict[str, int] = field(default_factory=dict)
    rationale: dict[str, str] = field(default_factory=dict)
    dropped_at: dict[str, int] = field(default_factory=dict)
    refused: list[dict[str, Any]] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    round_rows: list[dict[str, Any]] = field(default_factory=list)
    best: str = DRAFT
    spent: int = 0

    # ---------------------------------------------------------------- records

    def _folder(self) -> Any:
        return open_store(self.store) / ".optimize" / self.prefix

    def load_round(self, number: int) -> dict[str, Any] | None:
        path = self._folder() / f"round-{number:02d}.json"
        try:
            if not path.exists():
                return None
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def save_round(self, number: int, data: Mapping[str, Any]) -> None:
        folder = self._folder()
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
        # a lone surrogate (in a quoted transcript, say) is written as its JSON escape
        body = text.encode("utf-8", "backslashreplace")
        (folder / f"round-{number:02d}.json").write_bytes(body)

    # ---------------------------------------------------------------- a round

    def instructions_of(self, name: str) -> str:
        if name == DRAFT:
            return self.draft_instructions
        return str(self.variants[name].patch["agent"]["instructions"])

    def sweep(self, names: list[str]) -> _RoundSweep:
        tune_opts = TuneOptions(
            max_repeats=self.opts.max_repeats,
            holdout=self.opts.holdout,
            seed=self.opts.seed,
            run_options=self.opts.run_options,
            confidence=self.opts.confidence,
            min_effect=self.opts.min_effect,
            drop_alpha=self.opts.drop_alpha,
            confirm_repeats=self.opts.confirm_repeats,
        )
        targets: dict[str, Target] = {DRAFT: "draft", **{n: self.variants[n] for n in names}}
        sweep = _RoundSweep(
            self.client,
            self.assistant_id,
            self.grid,
            self.card,
            self.judge,
            self.store,
            tune_opts,
            list(names),
            targets,
            {n: f"{self.prefix}-{n}" for n in targets},
            self.held_out,
            active=dict.fromkeys(names, True),
        )
        sweep.runs.update(self.sweep_state.get("runs", {}))
        sweep.grades.update(self.sweep_state.get("grades", {}))
        return sweep

    def request(self, number: int) -> ProposalRequest:
        grades = self.sweep_state["grades"][self.best].frame
        run = self.sweep_state["runs"][self.best]
        rules = failing_rules(
            grades,
            run.turns,
            self.card,
            held_out=self.held_out,
            seed=self.opts.seed + number,
            conversations=run.conversations,
        )
        return ProposalRequest(
            instructions=self.instructions_of(self.best),
            failing_rules=tuple(rules),
            must_keep=tuple(sorted(self.keep)),
            candidates=self.opts.candidates,
            round=number,
        )

    def accept(self, number: int, proposals: Sequence[Proposal]) -> list[str]:
        """The proposals that may run, as variants (their prompts normalised,
        :func:`~._candidates.clean_prompt`); the rest refused with the reason."""
        names: list[str] = []
        seen: list[str] = []
        current = self.instructions_of(self.best)
        for i, proposal in enumerate(proposals, start=1):
            name = f"r{number}-c{i}"
            refusal = check_candidate(
                proposal.instructions,
                current=current,
                keep=self.keep,
                records=self.records,
                seen=[*seen, *(self.instructions_of(n) for n in self.variants)],
                max_chars=self.opts.max_prompt_chars,
            )
            if refusal is not None:
                self.refused.append(
                    {
                        "round": number,
                        "candidate": name,
                        "parent": self.best,
                        "kind": refusal.kind,
                        "reason": refusal.reason,
                    }
                )
                logger.info("optimize %s: %s not raced: %s", self.prefix, name, refusal)
                continue
            prompt = clean_prompt(proposal.instructions)
            seen.append(prompt)
            self.variants[name] = Variant(name, {"agent": {"instructions": prompt}}, "draft")
            self.parent[name] = self.best
            self.round_of[name] = number
            self.rationale[name] = proposal.rationale
            names.append(name)
        return names

    async def race(self, names: list[str]) -> None:
        sweep = self.sweep(names)
        level = drop_bound_confidence(len(names), self.opts.max_repeats, self.opts.drop_alpha)
        for wave in range(1, self.opts.max_repeats + 1):
            try:
                await sweep.run_wave(wave)
            except TuneError:
                if not names or len(sweep.failed) < len(names):
                    raise  # the draft failed: the search cannot go on
                break  # every candidate of the round failed: the next round goes on
            if names and self.opts.adaptive and wave < self.opts.max_repeats:
                for name in sweep.drop_after(wave, level):
                    logger.info("optimize %s: %s dropped after wave %d", self.prefix, name, wave)
        self.dropped_at.update(sweep.dropped_at)
        for name, message in sweep.failed.items():
            self.failed[name] = message
        self.sweep_state.setdefault("runs", {}).update(sweep.runs)
        self.sweep_state.setdefault("grades", {}).update(sweep.grades)

    def frames(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        from ..compare import first_repeats

        grades = self.sweep_state["grades"]
        reps = self.opts.max_repeats
        arms = {n: first_repeats(grades[n].frame, reps) for n in self.variants if n in grades}
        return first_repeats(grades[DRAFT].frame, reps), arms

    def selection_differences(self) -> dict[str, tuple[float, float, float]]:
        """Each raced candidate's difference against the draft on the selection cells."""
        control, arms = self.frames()
        if not arms:
            return {}
        _, cells, _, _, data = arms_arrays((DRAFT, control), arms)
        keep = np.asarray([c not in self.held_out for c in cells], dtype=bool)
        c = data.control.left_out.mask(keep)
        grid = paired_grid(
            type(c)(c.n[None, :], c.mean[None, :], c.var[None, :]),
            data.arms.left_out.mask(keep),
        )
        iv = grid.interval(self.opts.confidence)
        return {
            n: (float(iv.estimate[i]), float(iv.low[i]), float(iv.high[i]))
            for i, n in enumerate(arms)
        }

    def choose_best(self) -> None:
        diffs = self.selection_differences()
        live = {n: d for n, d in diffs.items() if n not in self.dropped_at and np.isfinite(d[0])}
        top = max(live, key=lambda n: live[n][0], default=None)
        self.best = top if top is not None and live[top][0] > 0 else DRAFT

    def conversations(self) -> int:
        return sum(len(r.conversations) for r in self.sweep_state.get("runs", {}).values())

    async def measure_gain(self, winner: str) -> tuple[FreshGain | None, str | None]:
        """The winner's gain on fresh repeats of every cell (its and the draft's), and the
        warning when they could not be had."""
        sweep = self.sweep([winner])
        gain = await sweep.run_fresh(winner)
        self.sweep_state["runs"].update(sweep.runs)
        self.sweep_state["grades"].update(sweep.grades)
        return gain, sweep.fresh_failed


async def _round(search: _Search, number: int) -> bool:
    """One round; False when the budget cannot afford it (the search stops)."""
    opts = search.opts
    cells = search.grid.n_cells
    saved = search.load_round(number)
    finished = saved is not None and saved.get("finished") is True
    if not finished and opts.max_conversations is not None:
        left = opts.max_conversations - search.conversations() - opts.fresh_cost(cells)
        if left < opts.round_cost(cells):
            logger.info(
                "optimize %s: round %d needs up to %d conversations, %d left (%d kept for "
                "the fresh repeats of a winner): stopping",
                search.prefix,
                number,
                opts.round_cost(cells),
                left,
                opts.fresh_cost(cells),
            )
            return False
    parent = search.best
    if saved is not None and isinstance(saved.get("proposals"), list):
        proposals = [
            Proposal(str(p["instructions"]), str(p.get("rationale", "")))
            for p in saved["proposals"]
        ]
        batch = ProposalBatch(
            tuple(proposals),
            int(saved.get("proposer_calls", 0)),
            int(saved.get("malformed", 0)),
            True,
        )
        request_block = saved.get("request", {})
    else:
        request = search.request(number)
        batch = screened(await search.proposer.apropose(request))
        request_block = request.block()
    record: dict[str, Any] = {
        "round": number,
        "parent": parent,
        "request": request_block,
        "proposals": [
            {"instructions": p.instructions, "rationale": p.rationale} for p in batch.proposals
        ],
        "proposer_calls": batch.calls,
        "malformed": batch.malformed,
        "finished": False,
    }
    search.save_round(number, record)
    before_refused = len(search.refused)
    before = search.conversations()
    names = search.accept(number, batch.proposals)
    if names:
        await search.race(names)
    search.choose_best()
    diffs = search.selection_differences()
    best = diffs.get(search.best, (0.0, np.nan, np.nan))
    row = {
        "round": number,
        "parent": parent,
        "proposer_calls": batch.calls,
        "proposed": len(batch.proposals),
        "malformed": batch.malformed,
        "refused": len(search.refused) - before_refused,
        "raced": len(names),
        "conversations": search.conversations() - before,
        "best": search.best,
        "best_difference": best[0],
        "best_low": best[1],
        "best_high": best[2],
    }
    search.round_rows.append(row)
    search.save_round(
        number,
        {
            **record,
            "finished": True,
            "refused": search.refused[before_refused:],
            "dropped_at": {n: w for n, w in search.dropped_at.items() if n in names},
            "summary": row,
        },
    )
    if search.progress is not None:
        search.progress(row)
    logger.info(
        "optimize %s: round %d raced %d candidate(s) (%d refused, %d malformed); best %s %+.1f",
        search.prefix,
        number,
        len(names),
        row["refused"],
        batch.malformed,
        search.best,
        best[0],
    )
    return True


def screened(batch: ProposalBatch) -> ProposalBatch:
    """``batch`` without the proposals that are not text (a lone surrogate cannot be recorded
    or sent): each is counted as malformed and dropped; rationales are cleaned."""
    kept = tuple(
        Proposal(p.instructions, clean_text(p.rationale))
        for p in batch.proposals
        if is_text(p.instructions)
    )
    dropped = len(batch.proposals) - len(kept)
    if dropped:
        logger.warning("optimize: %d proposal(s) held no valid text: dropped as malformed", dropped)
    return ProposalBatch(
        kept,
        batch.calls,
        batch.malformed + dropped,
        batch.cached,
        tuple(clean_text(r) for r in batch.reasons),
    )


def _unraced(
    candidate: tuple[Any, str, Any], status: tuple[str, str], rationale: str
) -> dict[str, Any]:
    """A rounds-table row of a candidate that ran no conversation: ``candidate`` is
    (round, name, parent); ``status`` is (verdict, why): ``refused`` or ``duplicate`` before
    running, ``not raced`` when it failed before a wave."""
    round_, name, parent = candidate
    verdict, why = status
    return {
        "round": round_,
        "candidate": name,
        "parent": parent,
        "status": f"{verdict}: {why}",
        "conversations": 0,
        "difference": np.nan,
        "difference_low": np.nan,
        "difference_high": np.nan,
        "holdout_difference": np.nan,
        "holdout_low": np.nan,
        "holdout_high": np.nan,
        "dropped_at": pd.NA,
        "verdict": verdict,
        "kept": False,
        "rationale": rationale,
    }


async def _decide(search: _Search, config: Mapping[str, Any], version: int) -> OptimizeResult:
    """The final decision over every candidate raced, the winner's gain on fresh repeats,
    and the result."""
    control, arms = search.frames()
    diffs = search.selection_differences()
    board = pd.DataFrame()
    summary: dict[str, Any] = {}
    raced = {n: raced_in(r, search.opts.max_repeats) for n, r in search.sweep_state["runs"].items()}
    warnings: list[str] = []
    if arms:
        info = ArmsInfo(
            dropped_at=search.dropped_at, conversations=raced, holdout_cells=search.held_out
        )
        board, _, summary = decide_arms(
            (DRAFT, control), arms, options=search.opts.decision, info=info
        )
        winner = summary.get("winner")
        if winner and search.opts.confirm_repeats:
            gain, failed = await search.measure_gain(str(winner))
            if gain is not None:
                record_fresh(board, summary, str(winner), gain)
            warnings += [failed] if failed else []
    board_rows: dict[str, dict[str, Any]] = {
        str(row["variant"]): {str(k): val for k, val in row.items()}
        for row in board.to_dict("records")
    }
    kept = {row["best"] for row in search.round_rows}
    rows = []
    for name in search.variants:
        if name not in arms:
            continue
        est = diffs.get(name, (np.nan, np.nan, np.nan))
        v = board_rows.get(name)
        rows.append(
            {
                "round": search.round_of[name],
                "candidate": name,
                "parent": search.parent[name],
                "status": "raced",
                "conversations": raced[name],
                "difference": est[0],
                "difference_low": est[1],
                "difference_high": est[2],
                **{
                    k: np.nan if v is None else float(v[k])
                    for k in ("holdout_difference", "holdout_low", "holdout_high")
                },
                "dropped_at": search.dropped_at.get(name, pd.NA),
                "verdict": "not raced" if v is None else str(v["verdict"]),
                "kept": name in kept,
                "rationale": search.rationale.get(name, ""),
            }
        )
    for name, message in search.failed.items():
        if name in arms:
            continue  # finished a wave: raced, dropped where it failed
        rows.append(
            _unraced(
                (search.round_of[name], name, search.parent[name]),
                ("not raced", f"failed before a wave ended: {message}"),
                search.rationale.get(name, ""),
            )
        )
    for item in search.refused:
        rows.append(
            _unraced(
                (item["round"], item["candidate"], item["parent"]),
                (str(item.get("kind", "refused")), str(item["reason"])),
                "",
            )
        )
    table = pd.DataFrame(rows, columns=OptimizeResult.ROUND_COLUMNS)
    table = table.sort_values(["round", "candidate"], kind="stable").reset_index(drop=True)
    table["dropped_at"] = table["dropped_at"].astype("Int64")
    winner_name = summary.get("winner")
    lineage = [
        {
            "candidate": name,
            "round": search.round_of[name],
            "parent": search.parent[name],
            "rationale": search.rationale.get(name, ""),
            "instructions": search.instructions_of(name),
        }
        for name in search.variants
    ]
    return OptimizeResult(
        winner=search.variants.get(str(winner_name)) if winner_name else None,
        rounds=table,
        progress=pd.DataFrame(search.round_rows, columns=OptimizeResult.PROGRESS_COLUMNS),
        lineage=lineage,
        leaderboard=board,
        decision={
            **summary,
            "run_prefix": search.prefix,
            "rounds_run": len(search.round_rows),
            "candidates_tried": len(arms),
            "refused": len(search.refused),
            "conversations": search.conversations(),
            "confirm_repeats": search.opts.confirm_repeats,
            "proposer": search.proposer.describe(),
        },
        variants=dict(search.variants),
        control_config=dict(config),
        assistant_id=search.assistant_id,
        draft_version=version,
        warnings=tuple(warnings),
    )


def optimize_run_prefix() -> str:
    """``optimize-YYYYmmdd-HHMMSS-<4 hex>``: a fresh search's run-id prefix."""
    return f"optimize-{now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def _resolve(
    proposer: ProposerArg, client: AsyncClient, assistant_id: str, store: StoreLike
) -> CandidateSource:
    if proposer == "refine":
        from ._refine_source import RefineProposer

        return RefineProposer(client, assistant_id, store=store)
    if isinstance(proposer, str) or not hasattr(proposer, "apropose"):
        raise TypeError(
            f"proposer: expected a Proposer (or an object with apropose) or 'refine', got {proposer!r}"
        )
    return proposer


async def aoptimize(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    proposer: ProposerArg,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: OptimizeOptions | None = None,
) -> OptimizeResult:
    """The async twin of :func:`optimize`."""
    opts = options or OptimizeOptions()
    card = Scorecard.validate(scorecard)
    full = _grid_with_repeats(grid, opts.max_repeats + opts.confirm_repeats)
    cells = full.n_cells
    if opts.max_conversations is not None and opts.max_conversations < opts.minimum(cells):
        fresh = (
            f", and {opts.confirm_repeats} fresh repeats for a winner and the draft"
            if opts.confirm_repeats
            else ""
        )
        raise ValueError(
            f"OptimizeOptions.max_conversations={opts.max_conversations} is below one round's "
            f"minimum of {opts.minimum(cells)} ({cells} cells x {opts.max_repeats} repeats for "
            f"the draft and for each of {opts.candidates} candidates{fresh})"
        )
    aclient, owned = as_async_client(client)
    try:
        source = _resolve(proposer, aclient, assistant_id, store)
        config, version = await _control_config(aclient, assistant_id)
        agent = config.get("agent") if isinstance(config.get("agent"), Mapping) else {}
        draft_instructions = str((agent or {}).get("instructions") or "")
        cell_list = list(full.cells())
        cell_ids = sorted({c.cell_id for c in cell_list})
        hold = holdout_mask(cell_ids, opts.holdout, opts.seed)
        records = [c.variables for c in cell_list]
        search = _Search(
            aclient,
            assistant_id,
            full,
            card,
            judge,
            store,
            opts,
            source,
            opts.run_prefix or optimize_run_prefix(),
            frozenset(c for c, h in zip(cell_ids, hold, strict=True) if h),
            draft_instructions,
            records,
            needed_tokens(draft_instructions, records),
            opts.on_round,
        )
        logger.info(
            "optimize %s: %d round(s) of %d candidate(s), %d cells (%d held out), up to %d "
            "conversations",
            search.prefix,
            opts.rounds,
            opts.candidates,
            cells,
            len(search.held_out),
            opts.expected(cells),
        )
        await reap_orphans(aclient, search.prefix)
        await search.race([])  # the draft, to the end: its failures open round 1
        for number in range(1, opts.rounds + 1):
            if not await _round(search, number):
                break
        now_config, now_version = await _control_config(aclient, assistant_id)
        if now_config == config:  # refine builds restored the draft: the same config, later
            version = now_version
        return await _decide(search, config, version)
    finally:
        if owned:
            await aclient.aclose()


def optimize(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    proposer: ProposerArg,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: OptimizeOptions | None = None,
) -> OptimizeResult:
    """Search for a better prompt for ``assistant_id``'s draft (module docstring).

    ``proposer``: a :class:`~evalkit.tuning.Proposer` (any OpenAI-compatible endpoint) or
    ``"refine"`` (each candidate a refine build, E10). Returns an :class:`OptimizeResult`: ``winner`` (a
    :class:`~evalkit.Variant`, or None when the held-out cells do not confirm one), ``rounds``,
    ``lineage``, ``promote(client)``. Works in scripts and notebooks (:func:`aoptimize` is the
    async twin).
    """
    return run_sync(
        lambda: aoptimize(
            grid,
            assistant_id,
            scorecard,
            proposer=proposer,
            client=client,
            judge=judge,
            store=store,
            options=options,
        )
    )
