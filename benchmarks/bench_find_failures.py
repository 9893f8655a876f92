"""Finding the callers that break a draft: planted weaknesses found, false findings.

Part 1 (the emulator, end to end): the embedded emulator is started with planted weaknesses
(``evalkit.emulator.dialogue.WEAKNESSES``: draft behaviours that give way for callers with
certain traits, never shown to the persona generator), and the demo assistant's draft is given
a prompt that asks for every behaviour the scorecard checks, so what fails is what was planted.
Three arms spend the same budget (screening, then the same confirmation on fresh repeats):

- ``search``: :func:`evalkit.find_failures` as shipped (coverage of trait pairs, then
  neighbours of failing callers);
- ``random``: the same search with personas drawn at random from the trait axes, no
  neighbours;
- ``bundled``: the 17 bundled personas screened once per cell, then the same choice and
  confirmation (the search's own decision code, :mod:`evalkit.personas._decide`).

A planted weakness is *found* by a search when it reports a persona that has every trait of
the weakness's row failing the rule that row breaks. A reported (persona, rule) pair that no row
explains is re-run on 24 more conversations; it is a *false finding* when its measured rate is
at or below the threshold (the draft's own base failure rate, from the bundled personas'
screening, is shown too).

Part 2 (the decision rule alone, many searches): the search's screening, choice and
confirmation on simulated counts, where every pair's true failure rate is *at* the threshold
(the hardest case for false findings), or at 0.6 / 0.9 (power); thousands of searches through
the very functions :func:`find_failures` calls.

Rates carry Wilson 95% intervals. Nothing is asserted (tests/personas asserts the bounds).
Run: ``nice python benchmarks/bench_find_failures.py [--searches 30] [--simulated 4000]
[--arms search,random,bundled]`` (about 25 minutes on a busy 2-core machine at the defaults: 90
end-to-end searches; ``--arms search --searches 200 --simulated 0`` runs the search alone);
writes only to a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.data import bundled_path
from evalkit.demo import DemoService
from evalkit.demo._story import CONTACTS, CONTEXT, FULL_INSTRUCTIONS, demo_scorecard
from evalkit.emulator.dialogue import WEAKNESSES, Weakness, persona_traits
from evalkit.flows import PipelineOptions, RunSpec, arun_and_grade
from evalkit.grid import Grid, Persona, load_personas
from evalkit.personas import FindOptions, PersonaGenerator, find_failures
from evalkit.personas._decide import choose, confirm, kept_pairs, specificity
from evalkit.runner import Budget, RunOptions
from evalkit.stats import wilson_interval

#: The rules a planted row's feature breaks.
RULES_OF: Mapping[str, frozenset[str]] = {
    "confirm": frozenset({"asks-confirmation"}),
    "script": frozenset({"urdu-script"}),
    "close": frozenset({"polite-close"}),
    "callback": frozenset({"handles-reschedule"}),
    "objections": frozenset({"polite-close", "short-call"}),
}
THRESHOLD = 0.25
CONFIDENCE = 0.95


def options(seed: int, strategy: str, prefix: str) -> FindOptions:
    """The search's knobs in every arm: 3 rounds of 8 personas on 2 records, 6 confirmed on 4
    fresh repeats of each cell (at most 48 + 48 conversations)."""
    return FindOptions(
        rounds=3,
        per_round=8,
        records_per_persona=2,
        screen_repeats=1,
        max_confirmed=6,
        confirm_repeats=4,
        threshold=THRESHOLD,
        confidence=CONFIDENCE,
        strategy="random" if strategy == "random" else "coverage",
        exploit=0.0 if strategy == "random" else 0.25,
        seed=seed,
        run_options=RunOptions(concurrency=16, progress=False),
        run_prefix=prefix,
    )


def explained(row: Weakness, behavior: str, rule: str) -> bool:
    return row.traits <= persona_traits({"behavior": behavior}) and rule in RULES_OF[row.feature]


def score(reported: Sequence[tuple[str, str]]) -> tuple[set[str], int]:
    """The planted rows a search's reported (behaviour, rule) pairs find, and how many pairs no
    row explains (each then has its true rate measured: :func:`truth_check`)."""
    found = {w.name for w in WEAKNESSES for b, r in reported if explained(w, b, r)}
    false = sum(not any(explained(w, b, r) for w in WEAKNESSES) for b, r in reported)
    return found, false


def truth_check(
    svc: DemoService, pairs: Sequence[tuple[str, str]], store: Path, prefix: str
) -> tuple[int, int]:
    """Reported pairs no planted row explains, each persona re-run on every record x 8
    repeats: how many have a measured failure rate at or below the threshold (false
    findings), and how many were checked."""
    rules = sorted({r for _b, r in pairs})
    odd = [(b, r) for b, r in pairs if not any(explained(w, b, r) for w in WEAKNESSES)]
    behaviours = sorted({b for b, _r in odd})
    personas = [Persona(f"truth-{k}", b) for k, b in enumerate(behaviours)]
    f, n, _labels = asyncio.run(
        _counts(svc, _grid(personas, CONTACTS, 8), f"{prefix}-truth", store, rules)
    )
    false = 0
    for b, r in odd:
        i, j = behaviours.index(b), rules.index(r)
        false += bool(n[i, j]) and f[i, j] / n[i, j] <= THRESHOLD
    return false, len(odd)


def _grid(personas: Sequence[Persona], records: Sequence[Mapping[str, Any]], repeats: int) -> Grid:
    return Grid(list(personas), variables=list(records), contexts=[CONTEXT], repeats=repeats)


async def _counts(
    svc: DemoService, grid: Grid, run_id: str, store: Path, rules: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    graded = await arun_and_grade(
        grid,
        svc.assistant_id,
        demo_scorecard(),
        RunSpec("draft", run_id),
        client=svc.client,
        judge=svc.judge,
        store=store,
        options=PipelineOptions(
            run=RunOptions(concurrency=16, progress=False, budget=Budget(len(grid)))
        ),
    )
    frame = graded.grades.frame
    labels = [p.label for p in grid.personas]
    f = np.zeros((len(labels), len(rules)), np.int64)
    n = np.zeros_like(f)
    decided = frame[frame["verdict"].isin(["pass", "fail"])]
    for (label, rule), group in decided.groupby(["persona_label", "rule_id"]):
        if rule in rules:
            i, j = labels.index(str(label)), list(rules).index(str(rule))
            f[i, j], n[i, j] = int((group["verdict"] == "fail").sum()), len(group)
    return f, n, labels


def bundled_search(
    svc: DemoService, seed: int, store: Path, rules: Sequence[str]
) -> tuple[list[tuple[str, str]], tuple[int, int, int]]:
    """The bundled 17 screened once per cell, then the search's choice and confirmation: the
    reported (behaviour, rule) pairs, and (failures, verdicts) of the screened pairs no planted
    row explains, and the conversations spent."""
    personas = load_personas(bundled_path("personas"))
    rng = np.random.default_rng(seed)
    records = [CONTACTS[i] for i in sorted(rng.choice(len(CONTACTS), 2, replace=False))]
    f, n, labels = asyncio.run(
        _counts(svc, _grid(personas, records, 1), f"bundled-{seed}-screen", store, rules)
    )
    plain = np.asarray(
        [
            [not any(explained(w, p.behavior, r) for w in WEAKNESSES) for r in rules]
            for p in personas
        ]
    )
    base = (int(f[plain].sum()), int(n[plain].sum()), len(personas) * len(records))
    kept = kept_pairs(f, n, 1)
    chosen = choose(specificity(f, n, kept), kept.any(axis=-1), 6)
    picked = [personas[i] for i in np.flatnonzero(chosen)]
    if not picked:
        return [], base
    ff, nn, plabels = asyncio.run(
        _counts(svc, _grid(picked, records, 4), f"bundled-{seed}-confirm", store, rules)
    )
    fresh = np.zeros_like(f)
    fresh_n = np.zeros_like(n)
    for k, label in enumerate(plabels):
        fresh[labels.index(label)], fresh_n[labels.index(label)] = ff[k], nn[k]
    verdict = confirm(
        fresh, fresh_n, kept & chosen[:, None], threshold=THRESHOLD, confidence=CONFIDENCE
    )
    pairs = [
        (personas[i].behavior, rules[j]) for i, j in zip(*np.nonzero(verdict.reported), strict=True)
    ]
    return pairs, (base[0], base[1], base[2] + len(picked) * len(records) * 4)


def _progress(arm: str, done: int, tally: tuple[int, int, int], started: float) -> None:
    """A running tally every 10 searches (planted rows found, searches with a false finding,
    reported pairs), so a long run that is stopped still reports."""
    hits, false, reported = tally
    if done % 10 == 0:
        logging.getLogger(__name__).warning(
            "%s: %d searches in %.0f s; planted rows found %s; searches w/ false find %s; "
            "reported pairs %d",
            arm,
            done,
            time.perf_counter() - started,
            _wilson(hits, done * len(WEAKNESSES)),
            _wilson(false, done),
            reported,
        )


def _wilson(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{k / n:6.1%} [{float(low):5.1%}, {float(high):5.1%}]" if n else "   n/a"


ARMS = ("search", "random", "bundled")


def part_one(searches: int, arms: Sequence[str] = ARMS) -> None:
    rules = [
        "asks-confirmation",
        "urdu-script",
        "polite-close",
        "handles-reschedule",
        "short-call",
        "states-date-time",
        "no-repetition",
    ]
    found: dict[str, list[int]] = {a: [0] * len(WEAKNESSES) for a in arms}
    false_searches = dict.fromkeys(arms, 0)
    false_pairs = dict.fromkeys(arms, 0)
    reported_pairs = dict.fromkeys(arms, 0)
    spent = dict.fromkeys(arms, 0)
    base_f = base_n = 0
    truth_checked = dict.fromkeys(arms, 0)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "runs"
        with DemoService(store, seed=11, planted_weaknesses=True) as svc:
            svc.set_draft_prompt(FULL_INSTRUCTIONS)
            generator = PersonaGenerator(
                model="emulator-generator", base_url=svc.emulator.generator_base_url
            )
            grid = _grid(load_personas(bundled_path("personas")), CONTACTS, 1)
            for s in range(searches):
                for arm in arms:
                    if arm == "bundled":
                        pairs, (bf, bn, used) = bundled_search(svc, s, store, rules)
                        base_f, base_n = base_f + bf, base_n + bn
                        spent[arm] += used
                    else:
                        result = find_failures(
                            grid,
                            svc.assistant_id,
                            demo_scorecard(),
                            generator=generator,
                            client=svc.client,
                            judge=svc.judge,
                            store=store,
                            options=options(s, arm, f"{arm}-{s}"),
                        )
                        spent[arm] += int(result.decision["conversations"])
                        behaviours = {p.label: p.behavior for p in result.found}
                        rows = result.findings[result.findings["reported"]]
                        pairs = [
                            (behaviours[str(p)], str(r))
                            for p, r in zip(rows["persona"], rows["rule_id"], strict=True)
                        ]
                    hit, unexplained = score(pairs)
                    false = 0
                    if unexplained:
                        false, checked = truth_check(svc, pairs, store, f"{arm}-{s}")
                        truth_checked[arm] += checked
                    for k, w in enumerate(WEAKNESSES):
                        found[arm][k] += w.name in hit
                    false_searches[arm] += false > 0
                    false_pairs[arm] += false
                    reported_pairs[arm] += len(pairs)
                    _progress(
                        arm,
                        s + 1,
                        (sum(found[arm]), false_searches[arm], reported_pairs[arm]),
                        started,
                    )
    took = time.perf_counter() - started
    print(f"\nPart 1: {searches} searches per arm on the emulator ({took:.0f} s)")
    print("share of searches that found each planted weakness (Wilson 95%)")
    header = f"{'weakness':<22}" + "".join(f"{a:>28}" for a in arms)
    print(header)
    for k, w in enumerate(WEAKNESSES):
        print(f"{w.name:<22}" + "".join(f"{_wilson(found[a][k], searches):>28}" for a in arms))
    total = searches * len(WEAKNESSES)
    print(f"{'all rows':<22}" + "".join(f"{_wilson(sum(found[a]), total):>28}" for a in arms))
    print(
        f"{'searches w/ false find':<22}"
        + "".join(f"{_wilson(false_searches[a], searches):>28}" for a in arms)
    )
    print(
        f"{'reported pairs':<22}"
        + "".join(f"{reported_pairs[a]:>20} ({false_pairs[a]} false)" for a in arms)
    )
    print(f"{'conversations/search':<22}" + "".join(f"{spent[a] / searches:>28.0f}" for a in arms))
    print(
        "pairs no row explains, re-run on 24 more conversations to measure their true rate: "
        + ", ".join(f"{a} {truth_checked[a]}" for a in arms)
    )
    if base_n:
        print(
            f"base failure rate (bundled screening, pairs no row explains): {_wilson(base_f, base_n)}"
        )


def part_two(simulated: int, seed: int = 7) -> None:
    """Screening, choice and confirmation on simulated counts (24 personas x 7 rules, 2 cells,
    1 screening repeat, 6 confirmed on 8 fresh conversations each)."""
    rng = np.random.default_rng(seed)
    personas, rules, screen_n, fresh_n = 24, 7, 2, 8
    print(f"\nPart 2: the decision rule on {simulated} simulated searches per row")
    print(f"{'true rates of the pairs':<44}{'searches w/ a false finding':>34}{'power':>30}")
    for label, rate, planted in (
        ("every pair at the threshold (25%)", THRESHOLD, 0.0),
        ("all 10%, 3 pairs at 60%", 0.10, 0.6),
        ("all 25%, 3 pairs at 90%", THRESHOLD, 0.9),
        ("all 0%, 3 pairs at 60%", 0.0, 0.6),
    ):
        p = np.full((simulated, personas, rules), rate)
        truly = np.zeros(p.shape, bool)
        if planted:
            for k in range(3):
                p[:, k, k] = planted
                truly[:, k, k] = True
        f = rng.binomial(screen_n, p)
        n = np.full(p.shape, screen_n)
        kept = kept_pairs(f, n, 1)
        chosen = choose(specificity(f, n, kept), kept.any(axis=-1), 6)
        fresh = rng.binomial(fresh_n, p)
        verdict = confirm(
            fresh,
            np.full(p.shape, fresh_n),
            kept & chosen[..., None],
            threshold=THRESHOLD,
            confidence=CONFIDENCE,
        )
        false = int((verdict.reported & (p <= THRESHOLD)).any(axis=(-1, -2)).sum())
        power = (
            _wilson(int((verdict.reported & truly).sum()), int(truly.sum())) if planted else "n/a"
        )
        print(f"{label:<44}{_wilson(false, simulated):>34}{power:>30}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=30, help="end-to-end searches per arm")
    parser.add_argument("--simulated", type=int, default=4000, help="simulated searches per row")
    parser.add_argument(
        "--arms",
        default=",".join(ARMS),
        help=f"comma-separated end-to-end arms to run, of {', '.join(ARMS)} (default all)",
    )
    args = parser.parse_args()
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if unknown := sorted(set(arms) - set(ARMS)):
        parser.error(f"unknown arms: {', '.join(unknown)}")
    logging.basicConfig(level=logging.WARNING)
    if args.simulated:
        part_two(args.simulated)
    part_one(args.searches, arms)


if __name__ == "__main__":
    main()
