"""find_failures / afind_failures: rounds of generated personas run against the draft, kept when
they make rules fail, and a kept persona's failures confirmed on fresh repeats.

Each round draws trait combinations (:mod:`._sampling`: pairwise coverage first, then also
neighbours of the callers that failed), has the generator write them (:mod:`._generation`,
every persona checked before it runs), and runs each persona on its cells (the grid's records,
``records_per_persona`` of them, crossed with its contexts) ``screen_repeats`` times on the
draft (run ``<prefix>-r<round>``), graded. That screening is the pilot too: a persona whose
caller does not behave as described (:func:`evalkit.simulation_flags`) is dropped and counted.
A (persona, rule) pair is kept when the rule failed; the personas with the most specific kept
failures are confirmed on ``confirm_repeats`` fresh repeats of their cells (run
``<prefix>-confirm``), and a pair is reported only when the fresh conversations show, by an
exact one-sided test with Holm's step-down over every pair tested, a failure rate above
``threshold`` (:mod:`._decide`). A persona that failed once by chance is not reported.

The budget (``max_conversations``) covers both: a round starts only when its worst case fits
beside what the confirmation needs. Each round's request, personas, refusals and screening go
to ``<store>/.personas/<prefix>/round-NN.json`` and the result to ``search.json``; the same
prefix resumes: a recorded round is neither generated again nor run again.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._util import run_sync
from ..api import AsyncClient, Client, as_async_client
from ..diagnose import simulation_flags
from ..flows import PipelineOptions, RunSpec, arun_and_grade
from ..grading import JudgeArg, Scorecard, ScorecardLike
from ..grid import Grid, Persona
from ..runner import Budget
from ..store import Run, StoreLike
from ._axes import TraitSpace, traits_text
from ._checks import CheckLimits, pilot_drops
from ._coverage import coverage_table, untried_pairs
from ._decide import choose, confirm, kept_pairs, specificity
from ._generate import (
    as_source,
    grid_records,
    mark_dropped,
    personas_from,
    personas_run_prefix,
    read_record,
    record_folder,
    write_record,
)
from ._generation import Generation, assistant_instructions, scorecard_rules
from ._generator import PersonaSource
from ._options import FindOptions
from ._result import FINDING_COLUMNS, FailureSearch, _traits_frame
from ._sampling import TraitSampler

__all__ = ["afind_failures", "find_failures"]

logger = logging.getLogger("evalkit.personas")

METHOD = (
    "screened on {screen} conversation(s) per cell, kept when a rule failed {keep}+ time(s); "
    "the {confirmed} most specific personas re-run on {fresh} fresh repeat(s) per cell; a "
    "failure is reported when an exact one-sided binomial test (Clopper-Pearson) shows its "
    "rate above {threshold:.0%}, Holm's step-down over the {tests} pair(s) tested at "
    "{alpha:.0%}"
)

Counts = dict[str, dict[str, tuple[int, int]]]


def _counts(grades: pd.DataFrame, labels: set[str], rules: Sequence[str]) -> Counts:
    """label -> rule -> (failures, decided) over ``grades``."""
    frame = grades[grades["persona_label"].isin(labels) & grades["rule_id"].isin(rules)]
    decided = frame[frame["verdict"].isin(["pass", "fail"])]
    table = (
        decided.assign(failed=decided["verdict"] == "fail")
        .groupby(["persona_label", "rule_id"])["failed"]
        .agg(["sum", "count"])
    )
    out: Counts = {label: {} for label in labels}
    for key, fails, count in zip(table.index, table["sum"], table["count"], strict=True):
        label, rule = key
        out[str(label)][str(rule)] = (int(fails), int(count))
    return out


def _arrays(
    counts: Counts, labels: Sequence[str], rules: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    f = np.zeros((len(labels), len(rules)), dtype=np.int64)
    n = np.zeros_like(f)
    for i, label in enumerate(labels):
        for j, rule in enumerate(rules):
            f[i, j], n[i, j] = counts.get(label, {}).get(rule, (0, 0))
    return f, n


def _examples(grades: pd.DataFrame) -> dict[tuple[str, str], tuple[str, str]]:
    """(label, rule) -> (conversation id, the grader's reason) of the first failing one."""
    failed = grades[grades["verdict"] == "fail"].sort_values(["conversation_id"], kind="stable")
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for label, rule, cid, why in zip(
        failed["persona_label"],
        failed["rule_id"],
        failed["conversation_id"],
        failed["rationale"],
        strict=True,
    ):
        out.setdefault((str(label), str(rule)), (str(cid), "" if why is None else str(why)))
    return out


@dataclass
class _Search:
    """The whole search's state across rounds."""

    client: AsyncClient
    assistant_id: str
    card: Scorecard
    judge: JudgeArg
    store: StoreLike
    opts: FindOptions
    source: PersonaSource
    prefix: str
    space: TraitSpace
    records: list[Mapping[str, Any] | None]
    contexts: list[str | None]
    rules: list[str]
    generation: Generation
    sampler: TraitSampler
    rows: list[dict[str, Any]] = field(default_factory=list)
    screened: dict[str, Persona] = field(default_factory=dict)
    screen: Counts = field(default_factory=dict)
    round_rows: list[dict[str, Any]] = field(default_factory=list)
    spent: int = 0
    stopped: str | None = None

    @property
    def cells(self) -> int:
        return len(self.records) * len(self.contexts)

    def grid_of(self, personas: Sequence[Persona], repeats: int) -> Grid:
        variables = None if self.records == [None] else list(self.records)
        return Grid(
            list(personas), variables=variables, contexts=list(self.contexts), repeats=repeats
        )

    async def run(self, grid: Grid, run_id: str) -> tuple[Run, pd.DataFrame]:
        graded = await arun_and_grade(
            grid,
            self.assistant_id,
            self.card,
            RunSpec("draft", run_id),
            client=self.client,
            judge=self.judge,
            store=self.store,
            options=PipelineOptions(
                run=replace(
                    self.opts.run_options,
                    budget=Budget(len(grid), self.opts.run_options.budget.max_seconds),
                )
            ),
        )
        self.spent += len(graded.run.conversations)
        return graded.run, graded.grades.frame

    def arrays(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        labels = list(self.screened)
        f, n = _arrays(self.screen, labels, self.rules)
        return labels, f, n

    def features(self, labels: Sequence[str], kept: np.ndarray) -> np.ndarray:
        """(persona, rule x trait value): what each persona's kept failures cover."""
        values = [(a.name, v) for a in self.space.axes for v in a.value_names]
        traits = np.asarray(
            [[(self.screened[x].traits or {}).get(a) == v for a, v in values] for x in labels],
            dtype=bool,
        ).reshape(len(labels), len(values))
        return np.asarray((kept[:, :, None] & traits[:, None, :]).reshape(len(labels), -1), bool)

    def failing_traits(self) -> list[dict[str, str]]:
        """The traits of personas with a kept pair, the most specific failures first."""
        labels, f, n = self.arrays()
        if not labels:
            return []
        kept = kept_pairs(f, n, self.opts.keep_failures)
        scores = specificity(f, n, kept)
        order = [i for i in np.argsort(-scores, kind="stable") if kept[i].any()]
        return [dict(self.screened[labels[i]].traits or {}) for i in order]

    async def round(self, number: int) -> bool:
        """One round; False when the budget cannot afford it (the search stops)."""
        opts = self.opts
        folder = record_folder(self.store, self.prefix)
        name = f"round-{number:02d}.json"
        saved = read_record(folder, name)
        if opts.max_conversations is not None and not (saved and saved.get("finished")):
            left = opts.max_conversations - self.spent - opts.confirm_cost(self.cells)
            if left < opts.round_cost(self.cells):
                self.stopped = (
                    f"the budget stopped the search before round {number}: it needs up to "
                    f"{opts.round_cost(self.cells)} conversations, {max(left, 0)} left beside "
                    f"the {opts.confirm_cost(self.cells)} kept for the confirmation"
                )
                logger.info("find_failures %s: %s", self.prefix, self.stopped)
                return False
        calls_before, malformed_before = self.generation.calls, self.generation.malformed
        if saved is not None and isinstance(saved.get("personas"), list):
            personas = personas_from(saved["personas"])
            rows = [dict(r) for r in saved.get("rows") or []]
            for row in rows:
                self.sampler.note(row.get("traits") or {})
            self.generation.existing += [(p.label, p.behavior) for p in personas]
            self.generation.calls += int(saved.get("generator_calls", 0))
            self.generation.malformed += int(saved.get("malformed", 0))
        else:
            combos = self.sampler.draw(opts.per_round, number, self.failing_traits(), opts.exploit)
            if not combos:
                self.stopped = "every trait combination has been tried"
                return False
            personas, rows = await self.generation.make(combos, number)
            write_record(
                folder,
                name,
                {
                    "round": number,
                    "finished": False,
                    "personas": [p.to_mapping() for p in personas],
                    "rows": rows,
                    "generator_calls": self.generation.calls - calls_before,
                    "malformed": self.generation.malformed - malformed_before,
                },
            )
        before = self.spent
        failing = 0
        if personas:
            run, grades = await self.run(
                self.grid_of(personas, opts.screen_repeats), f"{self.prefix}-r{number:02d}"
            )
            drops = pilot_drops(
                simulation_flags(run, personas=personas), run.conversations, opts.max_flagged_share
            )
            mark_dropped(rows, drops)
            live = {p.label: p for p in personas if p.label not in drops}
            self.screened.update(live)
            counts = _counts(grades, set(live), self.rules)
            self.screen.update(counts)
            failing = sum(
                any(f >= opts.keep_failures for f, _ in by_rule.values())
                for by_rule in counts.values()
            )
        self.rows += rows
        row = {
            "round": number,
            "asked": len(rows),
            "refused": sum(r["status"] == "refused" for r in rows),
            "dropped": sum(r["status"] == "dropped" for r in rows),
            "screened": sum(r["status"] == "kept" for r in rows),
            "failing": failing,
            "conversations": self.spent - before,
            "generator_calls": self.generation.calls - calls_before,
            "malformed": self.generation.malformed - malformed_before,
        }
        self.round_rows.append(row)
        write_record(
            folder,
            name,
            {
                "round": number,
                "finished": True,
                "personas": [p.to_mapping() for p in personas],
                "rows": rows,
                "generator_calls": row["generator_calls"],
                "malformed": row["malformed"],
                "summary": row,
            },
        )
        if opts.on_round is not None:
            opts.on_round(row)
        logger.info(
            "find_failures %s: round %d screened %d persona(s), %d failing a rule",
            self.prefix,
            number,
            row["screened"],
            failing,
        )
        return True

    async def decide(self) -> FailureSearch:
        opts = self.opts
        labels, f, n = self.arrays()
        kept = kept_pairs(f, n, opts.keep_failures)
        scores = specificity(f, n, kept)
        chosen = (
            choose(scores, kept.any(axis=-1), opts.max_confirmed, self.features(labels, kept))
            if labels
            else np.zeros(0, bool)
        )
        confirmed = [labels[i] for i in np.flatnonzero(chosen)]
        fresh = np.zeros_like(f)
        fresh_n = np.zeros_like(n)
        examples: dict[tuple[str, str], tuple[str, str]] = {}
        before = self.spent
        if confirmed:
            personas = [self.screened[label] for label in confirmed]
            _run, grades = await self.run(
                self.grid_of(personas, opts.confirm_repeats), f"{self.prefix}-confirm"
            )
            counts = _counts(grades, set(confirmed), self.rules)
            fresh, fresh_n = _arrays(counts, labels, self.rules)
            examples = _examples(grades)
        tested = kept & chosen[:, None] if labels else kept
        verdict = confirm(
            fresh, fresh_n, tested, threshold=opts.threshold, confidence=opts.confidence
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            base = np.where(n.sum(axis=0) > 0, f.sum(axis=0) / np.maximum(n.sum(axis=0), 1), np.nan)
        titles = {r.rule_id: r.title for r in self.card.rules}
        rows = []
        for i, j in zip(*np.nonzero(verdict.tested), strict=True):
            label, rule = labels[i], self.rules[j]
            cid, why = examples.get((label, rule), ("", ""))
            rows.append(
                {
                    "persona": label,
                    "traits": traits_text(self.screened[label].traits or {}),
                    "rule_id": rule,
                    "title": titles.get(rule, ""),
                    "screen_failures": int(f[i, j]),
                    "screen_decided": int(n[i, j]),
                    "failures": int(fresh[i, j]),
                    "decided": int(fresh_n[i, j]),
                    "rate": float(verdict.rate[i, j]),
                    "rate_low": float(verdict.low[i, j]),
                    "rate_high": float(verdict.high[i, j]),
                    "p_value": float(verdict.p_value[i, j]),
                    "p_adjusted": float(verdict.p_adjusted[i, j]),
                    "reported": bool(verdict.reported[i, j]),
                    "rule_base_rate": float(base[j]),
                    "example_conversation_id": cid,
                    "example": why,
                }
            )
        findings = pd.DataFrame(rows, columns=list(FINDING_COLUMNS))
        if len(findings):
            findings = findings.sort_values(
                ["reported", "p_adjusted", "persona"], ascending=[False, True, True], kind="stable"
            ).reset_index(drop=True)
        reported: dict[str, list[str]] = {}
        for r in findings.itertuples():
            if r.reported:
                reported.setdefault(str(r.persona), []).append(str(r.rule_id))
        kept_rules = {
            labels[i]: [self.rules[j] for j in np.flatnonzero(kept[i])] for i in range(len(labels))
        }
        for row in self.rows:
            label = row["label"]
            row["screen_failures"] = (
                int(f[labels.index(label)].sum()) if label in self.screened else 0
            )
            row["kept_rules"] = ", ".join(kept_rules.get(label, []))
            row["confirmed"] = label in confirmed
            row["reported_rules"] = ", ".join(reported.get(label, []))
        screened_traits = [dict(p.traits or {}) for p in self.screened.values()]
        untried = untried_pairs(self.space, screened_traits)
        total_pairs = len(self.space.pairs())
        warnings = [self.stopped] if self.stopped and "budget" in self.stopped else []
        waiting = int((kept.any(axis=-1) & ~chosen).sum()) if labels else 0
        if waiting:
            warnings.append(
                f"{waiting} more persona(s) failed a rule in screening but were not re-run "
                f"(max_confirmed={opts.max_confirmed})"
            )
        tests = int(verdict.tested.sum())
        decision = {
            "method": METHOD.format(
                screen=opts.screen_repeats,
                keep=opts.keep_failures,
                confirmed=len(confirmed),
                fresh=opts.confirm_repeats,
                threshold=opts.threshold,
                tests=tests,
                alpha=1.0 - opts.confidence,
            ),
            "threshold": opts.threshold,
            "confidence": opts.confidence,
            "tests": tests,
            "reported": int(verdict.reported.sum()),
            "screened_personas": len(labels),
            "confirmed_personas": len(confirmed),
            "conversations": self.spent,
            "confirmation_conversations": self.spent - before,
            "max_conversations": opts.max_conversations,
            "rounds_run": len(self.round_rows),
            "cells_per_persona": self.cells,
            "rules": list(self.rules),
            "strategy": opts.strategy,
            "seed": opts.seed,
            "pairs_covered": total_pairs - len(untried),
            "pairs": total_pairs,
            "run_prefix": self.prefix,
            "generator": self.source.describe(),
            "generator_calls": self.generation.calls,
            "malformed": self.generation.malformed,
        }
        result = FailureSearch(
            findings=findings,
            personas=_traits_frame(self.rows, self.space.names),
            rounds=pd.DataFrame(self.round_rows),
            coverage=coverage_table(
                self.space,
                self.rows,
                [label for label, by_rule in kept_rules.items() if by_rule],
                reported,
            ),
            untried=untried,
            found=tuple(self.screened[label] for label in reported),
            decision=decision,
            warnings=tuple(warnings),
        )
        write_record(record_folder(self.store, self.prefix), "search.json", result.to_dict())
        return result


def _chosen_records(
    records: list[Mapping[str, Any] | None], k: int | None, seed: int
) -> list[Mapping[str, Any] | None]:
    if k is None or len(records) <= k:
        return records
    picked = sorted(random.Random(seed).sample(range(len(records)), k))
    return [records[i] for i in picked]


async def afind_failures(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    generator: PersonaSource | None = None,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: FindOptions | None = None,
) -> FailureSearch:
    """The async twin of :func:`find_failures`."""
    opts = options or FindOptions()
    card = Scorecard.validate(scorecard)
    ids = [r.rule_id for r in card.rules]
    if opts.rules is not None:
        unknown = sorted(set(opts.rules) - set(ids))
        if unknown:
            raise ValueError(
                f"FindOptions.rules: {', '.join(unknown)} not in the scorecard (its rules: "
                f"{', '.join(ids)})"
            )
    rules = [r for r in ids if opts.rules is None or r in opts.rules]
    source = as_source(generator)
    space = opts.space
    all_records, contexts = grid_records(grid)
    records = _chosen_records(all_records, opts.records_per_persona, opts.seed)
    cells = len(records) * len(contexts)
    if opts.max_conversations is not None and opts.max_conversations < opts.minimum(cells):
        raise ValueError(
            f"FindOptions.max_conversations={opts.max_conversations} is below one round and "
            f"the confirmation: {opts.minimum(cells)} ({opts.per_round} personas x {cells} "
            f"cells x {opts.screen_repeats} repeat(s), and {opts.max_confirmed} personas x "
            f"{cells} cells x {opts.confirm_repeats} fresh repeat(s))"
        )
    aclient, owned = as_async_client(client)
    try:
        generation = Generation(
            source,
            space,
            await assistant_instructions(aclient, assistant_id),
            scorecard_rules(card, rules),
            CheckLimits(opts.max_behavior_chars, all_records),
            opts.max_similarity,
            opts.per_call,
            opts.seed,
            existing=[(p.label, p.behavior) for p in grid.personas],
        )
        search = _Search(
            aclient,
            assistant_id,
            card,
            judge,
            store,
            opts,
            source,
            opts.run_prefix or personas_run_prefix(),
            space,
            records,
            contexts,
            rules,
            generation,
            TraitSampler(space, opts.seed, opts.strategy),
        )
        logger.info(
            "find_failures %s: up to %d round(s) of %d persona(s), %d cell(s) each, up to %d "
            "conversations",
            search.prefix,
            opts.rounds,
            opts.per_round,
            cells,
            opts.expected(cells),
        )
        for number in range(1, opts.rounds + 1):
            if not await search.round(number):
                break
        return await search.decide()
    finally:
        if owned:
            await aclient.aclose()


def find_failures(
    grid: Grid,
    assistant_id: str,
    scorecard: ScorecardLike,
    *,
    generator: PersonaSource | None = None,
    client: Client | AsyncClient | None = None,
    judge: JudgeArg = None,
    store: StoreLike = "runs",
    options: FindOptions | None = None,
) -> FailureSearch:
    """Search for the callers that make ``assistant_id``'s draft fail ``scorecard``'s rules
    (module docstring).

    ``grid``: the regression grid the callers would join (its records and contexts are what
    each persona runs with, its personas what a near-duplicate is measured against);
    ``generator``: a :class:`~evalkit.personas.PersonaGenerator` (None: one from
    ``EVALKIT_GENERATOR_*``). Returns a :class:`~evalkit.personas.FailureSearch`:
    ``findings`` (every pair confirmed on fresh repeats, ``reported`` or not), ``summary``
    (the reported ones), ``coverage``, ``untried``, ``write(folder)``. Works in scripts and
    notebooks (:func:`afind_failures` is the async twin).
    """
    return run_sync(
        lambda: afind_failures(
            grid,
            assistant_id,
            scorecard,
            generator=generator,
            client=client,
            judge=judge,
            store=store,
            options=options,
        )
    )
