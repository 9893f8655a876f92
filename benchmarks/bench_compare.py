"""compare_grades on 100k conversations a side x 10 rules (target: under 2 s).

Prints the time of compare_grades and of a bare pandas baseline in the same run (a groupby
that only sums awarded points per conversation and averages them per cell), and their ratio.
Run: ``python benchmarks/bench_compare.py``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

# run as `python benchmarks/NAME.py`: the repository root holds the tests' generators
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.compare import compare_grades
from tests.simulate import SyntheticTruth

CONVERSATIONS = 100_000
RULES = 10
CELLS = 1_000  # 100 repeats a cell


def _truth(seed: int) -> SyntheticTruth:
    base = SyntheticTruth.demo(seed=seed, cells=CELLS, personas=20)
    rng = np.random.default_rng(seed)
    return replace(
        base,
        rule_ids=tuple(f"rule-{j}" for j in range(RULES)),
        points=tuple(float(x) for x in rng.integers(5, 20, RULES)),
        judged=tuple(j >= RULES // 2 for j in range(RULES)),
        p_pass=rng.uniform(0.5, 0.95, size=(CELLS, RULES)),
    )


def _baseline(grades: pd.DataFrame) -> pd.Series:
    per_conversation = grades.groupby(["cell_id", "conversation_id"])["points_awarded"].sum()
    return per_conversation.groupby(level=0).mean()


def main() -> None:
    truth = _truth(1)
    repeats = CONVERSATIONS // CELLS
    prod = truth.frame(truth.simulate(1, repeats, 1)[0], run_id="prod")
    draft_truth = truth.shifted(-2.0)
    draft = draft_truth.frame(draft_truth.simulate(1, repeats, 2)[0], run_id="draft")
    print(f"{len(prod):,} grade rows a side ({CONVERSATIONS:,} conversations x {RULES} rules)")

    start = time.perf_counter()
    for frame in (prod, draft):
        _baseline(frame)
    bare = time.perf_counter() - start

    start = time.perf_counter()
    result = compare_grades(prod, draft)
    took = time.perf_counter() - start

    print(f"bare pandas groupby-mean, both sides: {bare:.2f} s")
    print(f"compare_grades: {took:.2f} s (target < 2 s), {took / bare:.2f}x the baseline")
    print(str(result).splitlines()[0])


if __name__ == "__main__":
    main()
