"""Latency comparisons on the demo's grid: A/A false alarms and power for agent slowdowns.

Trials come from the independent generator in ``tests/latency_world.py`` (18 cells x 3 repeats
a side, 2-6 agent answers per conversation around 1.2 s, shared cell effects, conversation
effects, log-t turn noise with 3 degrees of freedom and occasional multi-second stalls); every
agent answer of the candidate is ``shift`` seconds slower. Each trial runs ``compare_latency``
with its defaults (p50 and p95, 95%, ``min_effect_s`` 0.25). Prints, per shift, the share of
trials whose p50 / p95 row and whose overall verdict says ``regressed`` (false alarms at shift
0, where ``improved`` counts too), and the median interval width. Nothing is asserted (tests
assert binomial bounds); this prints the table README shows.
Run: ``python benchmarks/bench_latency.py [--trials 400] [--resamples 2000]`` (~2-4 min).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.compare import compare_latency
from tests.latency_world import LatencyWorld

SHIFTS = (0.0, 0.1, 0.2, 0.3, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    world = LatencyWorld()
    print(f"{args.trials} trials per row, {args.resamples} resamples, demo grid 18 x 3 a side")
    print(
        "| slowdown (s) | p50 called | p95 called | overall `regressed` | "
        "p50 CI width | p95 CI width | ms / comparison |"
    )
    print("|---|---|---|---|---|---|---|")
    for shift in SHIFTS:
        called = {"p50": 0, "p95": 0}
        overall = 0
        widths: dict[str, list[float]] = {"p50": [], "p95": []}
        t0 = time.perf_counter()
        for t in range(args.trials):
            base, cand = world.pair(10_000 + t, shift)
            r = compare_latency(base, cand, n_resamples=args.resamples, seed=t)
            wrong = ("improved", "regressed") if shift == 0 else ("regressed",)
            for row in r.summary.itertuples(index=False):
                called[row.quantile] += row.verdict in wrong
                widths[row.quantile].append(row.difference_high - row.difference_low)
            overall += r.verdict.value in wrong
        ms = (time.perf_counter() - t0) / args.trials * 1000
        n = args.trials
        label = f"{shift:.1f} (A/A: false alarms)" if shift == 0 else f"{shift:.1f}"
        print(
            f"| {label} | {100 * called['p50'] / n:.1f}% | {100 * called['p95'] / n:.1f}% | "
            f"{100 * overall / n:.1f}% | {np.median(widths['p50']):.2f} s | "
            f"{np.median(widths['p95']):.2f} s | {ms:.0f} |"
        )


if __name__ == "__main__":
    main()
