"""Bisect against re-running every single change separately: conversations spent and how often
the culprit is named, with 8 changes of which one carries a regression.

Each configuration tried is decided as ``bisect`` decides it: waves of one repeat per cell of
the demo's grid (18 cells, up to 3 repeats), each compared with the good run's stored grades by
``compare_sequential`` under the default ``SequentialPlan`` (its look-adjusted interval), and
decided as soon as that interval lies on one side of half the bad run's difference (at the last
look by the point estimate). The grades come from this script's own generator (not
evalkit's calibration generator): 4 rules of 25 points, a pass probability per cell and rule,
independent repeats; the culprit lowers every pass probability so the expected score drops by
``--drop`` points; other changes do nothing. "Separately" runs the 8 single-change
configurations with the same plan and names every one that regressed.
Run: ``python benchmarks/bench_bisect.py [--trials 60]`` (~1-2 min at 60 on 2 cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from evalkit.compare import SequentialPlan, compare_grades, compare_sequential
from evalkit.flows._bisect_search import find_culprit, side_of

CELLS, REPEATS, RULES = 18, 3, 4


def _grades(rng: np.random.Generator, p: np.ndarray, run_id: str, repeats: int) -> pd.DataFrame:
    """Grades of ``repeats`` repeats of every cell (``p``: pass probability, cells x rules)."""
    rows = []
    for cell in range(CELLS):
        for repeat in range(1, repeats + 1):
            passed = rng.random(RULES) < p[cell]
            cid = f"{run_id}-{cell}-{repeat}"
            for rule in range(RULES):
                where = (run_id, cid, f"cell-{cell:02d}", f"persona-{cell % 6}", repeat)
                verdict = ("pass" if passed[rule] else "fail", 25.0 * passed[rule])
                rows.append((*where, f"rule-{rule}", "card", 25.0, *verdict))
    columns = ["run_id", "conversation_id", "cell_id", "persona_label", "repeat", "rule_id"]
    columns += ["rubric_version_id", "points", "verdict", "points_awarded"]
    return pd.DataFrame(rows, columns=columns)


def _tester(
    rng: np.random.Generator, p: np.ndarray, culprit: int, drop: float, spent: list[int]
) -> tuple[pd.DataFrame, object]:
    good = _grades(rng, p, "good", REPEATS)
    plan = SequentialPlan(REPEATS)
    bad_p = np.clip(p * (1 - drop / (100 * p.mean())), 0, 1)
    bad = _grades(rng, bad_p, "bad", REPEATS)
    midpoint = float(compare_grades(good, bad).summary.iloc[0]["difference"]) / 2

    def test(subset: tuple[int, ...]) -> bool:
        truth = bad_p if culprit in subset else p
        cand = _grades(rng, truth, "try", REPEATS)
        for look in range(1, REPEATS + 1):
            row = compare_sequential(good, cand, plan, look=look).summary.iloc[0]
            side = side_of(
                float(row["difference"]),
                float(row["difference_low"]),
                float(row["difference_high"]),
                midpoint,
                look == REPEATS,
            )
            if side is not None:
                break
        spent.append(CELLS * look)
        return bool(side)

    return good, test


def trial(seed: int, changes: int, drop: float) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    p = np.clip(
        rng.uniform(0.55, 0.95, size=(CELLS, 1)) + rng.normal(0, 0.05, (CELLS, RULES)), 0, 1
    )
    culprit = int(rng.integers(changes))
    spent_bisect: list[int] = []
    _, test = _tester(rng, p, culprit, drop, spent_bisect)
    found = find_culprit(range(changes), test)  # type: ignore[arg-type]
    spent_each: list[int] = []
    _, test_each = _tester(rng, p, culprit, drop, spent_each)
    named = [c for c in range(changes) if test_each((c,))]  # type: ignore[operator]
    return {
        "bisect": sum(spent_bisect),
        "bisect_right": float(found == (culprit,)),
        "each": sum(spent_each),
        "each_right": float(named == [culprit]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--changes", type=int, default=8)
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        "| drop (points) | bisect: conversations (mean) | culprit named alone | "
        "each change separately: conversations | culprit named alone | fewer with bisect |"
    )
    print("|---|---|---|---|---|---|")
    for drop in (10.0, 15.0, 20.0):
        rows = pd.DataFrame([trial(s, args.changes, drop) for s in range(args.trials)])
        saved = 1 - rows["bisect"].mean() / rows["each"].mean()
        print(
            f"| {drop:.0f} | {rows['bisect'].mean():.0f} | {rows['bisect_right'].mean():.0%} | "
            f"{rows['each'].mean():.0f} | {rows['each_right'].mean():.0%} | {saved:.0%} |"
        )
    print(
        f"\n{args.trials} trials per row, {args.changes} changes, one culprit; conversations on "
        f"the tried side only (both reuse the good run); {time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
