"""Optimising a prompt: what the search finds on the emulator, what it spends, and how often a
search without confirmation calls a false winner.

Part 1 (emulator): from the demo's regressed draft (18 cells, the demo's personas and
contacts), ``optimize`` with the emulated proposer (rounds 3, candidates 4, 2 waves a race,
30% of cells held out), three ways on the same seeds: evalkit (adaptive arms, a winner only
when the held-out cells confirm it), (a) every proposed candidate run to the end, and (b) a
greedy loop that keeps the best selection-cell score each round and calls it the winner
without confirmation (the same races as (a): its pick is the best selection-cell candidate).
For each: the winner, its held-out difference against the draft (and the draft's regression
against prod on the same held-out cells, to say how much was recovered), conversations,
rounds; then proposer calls and conversations per round, and what a resumed search spends.

Part 2 (simulated, this repo's generator, not the emulator): searches whose proposer changes
nothing, and searches with one real 15-point candidate, decided by evalkit and by the greedy
rules (best above the draft on the selection cells; that and a one-sided t at 5% there).

Part 3 (simulated, the gain's own generator, :mod:`tests.simulate._gain`): searches of 3
rounds x 4 candidates on 18 cells x 2 waves where every candidate is truly +5, +10 or 0
points, and over the confirmed winners what each number reports against the truth: the
all-cells difference (the headline before), the held-out difference, the difference on 2 fresh
repeats of every cell (the headline now) with how often its 95% interval holds the truth, and
the selection-adjusted held-out difference (the gain without fresh repeats). Rates carry Wilson
95% intervals.

Nothing is asserted (tests/tune asserts the bounds); this prints the docs' tables.
Run: ``python benchmarks/bench_optimize.py [--trials 1000] [--gain-searches 10000]
[--skip-emulator]`` (~6 min).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

# run as `python benchmarks/NAME.py`: the repository root holds the tests' generators
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.simulate import Design
from tests.simulate._gain import GainDesign, gain_row
from tests.simulate._optimize import simulate_search


def _md(frame: pd.DataFrame, fmt: str = "{:+.1f}") -> str:
    """A markdown table (no tabulate needed)."""

    def cell(v: Any) -> str:
        return fmt.format(v) if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |"]
    lines.append("|" + "---|" * len(frame.columns))
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _held_out_difference(base: pd.DataFrame, cand: pd.DataFrame, cells: set[str]) -> str:
    import evalkit

    c = evalkit.compare_grades(base[base["cell_id"].isin(cells)], cand[cand["cell_id"].isin(cells)])
    row = c.summary.iloc[0]
    return f"{row['difference']:+.1f} [{row['difference_low']:+.1f}, {row['difference_high']:+.1f}]"


def emulator_part(seed: int) -> None:
    from evalkit.demo import DemoService, demo_grid, demo_scorecard
    from evalkit.grading import grade_run
    from evalkit.runner import RunOptions
    from evalkit.tuning import OptimizeOptions, OptimizeResult, Proposer, optimize

    fast = RunOptions(concurrency=16, progress=False)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder, DemoService(Path(folder) / "runs") as svc:
        store = Path(folder) / "runs"
        proposer = Proposer("emulator-proposer", svc.emulator.proposer_base_url)

        def search(prefix: str, adaptive: bool) -> tuple[OptimizeResult, float]:
            start = time.perf_counter()
            result = optimize(
                demo_grid(1),
                svc.assistant_id,
                demo_scorecard(),
                proposer=proposer,
                client=svc.client,
                judge=svc.judge,
                store=store,
                options=OptimizeOptions(
                    rounds=3,
                    candidates=4,
                    seed=seed,
                    run_options=fast,
                    run_prefix=prefix,
                    adaptive=adaptive,
                ),
            )
            return result, time.perf_counter() - start

        ours, wall = search("ours", True)
        everything, wall_all = search("all", False)
        held = set(ours.decision["holdout_cell_ids"])
        grid = demo_grid(2)
        prod = svc.run(grid, target="prod", run_id="prod", options=fast)
        prod_grades = grade_run(prod, demo_scorecard(), judge=svc.judge).frame
        from evalkit.store import load_run

        draft = load_run("ours-draft", store=store)
        draft_grades = grade_run(draft, demo_scorecard(), judge=svc.judge).frame
        regression = _held_out_difference(draft_grades, prod_grades, held)

        def winner_row(
            name: str, result: OptimizeResult, pick: str | None, claimed: bool, conversations: int
        ) -> dict[str, Any]:
            diff = "–"
            if pick is not None:
                run = load_run(f"{result.decision['run_prefix']}-{pick}", store=store)
                grades = grade_run(run, demo_scorecard(), judge=svc.judge).frame
                diff = _held_out_difference(draft_grades, grades, held)
            return {
                "method": name,
                "winner claimed": (pick if claimed else "none") or "none",
                "its held-out difference vs draft": diff,
                "conversations": conversations,
                "rounds": int(result.decision["rounds_run"]),
            }

        rows.append(
            winner_row(
                "evalkit (adaptive, confirmed)",
                ours,
                ours.winner.name if ours.winner else ours.decision.get("selected"),
                ours.winner is not None,
                ours.n,
            )
        )
        rows.append(
            winner_row(
                "(a) every candidate to the end, confirmed",
                everything,
                everything.winner.name
                if everything.winner
                else everything.decision.get("selected"),
                everything.winner is not None,
                everything.n,
            )
        )
        greedy = everything.decision.get("selected")
        rows.append(
            winner_row("(b) greedy, no confirmation", everything, greedy, True, everything.n)
        )
        print(f"evalkit's headline: {ours.headline()}\n")
        print(f"draft vs prod on the {len(held)} held-out cells (prod minus draft): {regression}\n")
        print(_md(pd.DataFrame(rows)))
        print(f"\nwall time: evalkit {wall:.0f} s, every candidate to the end {wall_all:.0f} s\n")
        print(
            _md(
                ours.progress[
                    [
                        "round",
                        "proposer_calls",
                        "proposed",
                        "malformed",
                        "refused",
                        "raced",
                        "conversations",
                        "best",
                        "best_difference",
                    ]
                ]
            )
        )
        print("\nthe winner's change:\n" + ours.diff.split("prompt:")[-1])
        before = svc.emulator.stats()
        search("ours", True)
        after = svc.emulator.stats()
        print(
            f"\nresumed with the same prefix: {after['started'] - before['started']} conversations, "
            f"{after.get('proposerCalls', 0) - before.get('proposerCalls', 0)} proposer calls"
        )


def simulated_part(trials: int) -> None:
    design = Design("18 cells x 2 waves", cells=18, repeats=2)
    rows = []
    for label, effects in (
        ("no-op, 1 round x 4", [[0.0] * 4]),
        ("no-op, 3 rounds x 4", [[0.0] * 4] * 3),
        ("no-op, 5 rounds x 4", [[0.0] * 4] * 5),
        (
            "one +15 among 3 rounds x 4",
            [[0.0, -10.0, 0.0, 0.0], [15.0, 0.0, -10.0, 0.0], [0.0] * 4],
        ),
        (
            "one +10 among 3 rounds x 4",
            [[0.0, -10.0, 0.0, 0.0], [10.0, 0.0, -10.0, 0.0], [0.0] * 4],
        ),
    ):
        r = simulate_search(design, effects, trials=trials, seed=len(rows))
        rows.append(
            {
                "searches": label,
                "evalkit: winner confirmed": _pct(r.confirmed),
                "evalkit: the real one": _pct(r.best_confirmed),
                "greedy: best above draft": _pct(r.greedy_above),
                "greedy + t at 5%": _pct(r.greedy_t),
                "conversations": f"{r.conversations:.0f}",
                "trials": trials,
            }
        )
    print(_md(pd.DataFrame(rows)))


def gain_part(searches: int) -> None:
    design = GainDesign("18 cells x 2 waves, 3 rounds x 4", cells=18, max_repeats=2)
    rows = []
    for i, effect in enumerate((5.0, 10.0, 0.0)):
        row = gain_row(design, [[effect] * 4] * 3, trials=searches, seed=1000 * (i + 1))
        rows.append({"every candidate truly": f"{effect:+g}", **row})
    frame = pd.DataFrame(rows)
    frame["truth"] = frame["truth"].map(lambda v: "-" if pd.isna(v) else f"{v:+.1f}")
    print(_md(frame))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--gain-searches", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-emulator", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    gain_part(args.gain_searches)
    print()
    simulated_part(args.trials)
    print()
    if not args.skip_emulator:
        emulator_part(args.seed)


if __name__ == "__main__":
    main()
