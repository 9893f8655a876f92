"""Prompt tuning across variants: calibration of the winner's claim, and what adaptive
allocation saves.

Part 1 (calibration): for K = 5 arms on the issue's design (36 cells x 4 repeats a side) it
generates sweeps with no real effect and with one arm 2..15 points better, decides each as
``compare_variants`` does, and prints how often a winner is confirmed (any arm, the truly
best, another), next to two other confirmation rules measured on the same sweeps: a plain
split (choose on the selection cells, one-sided t at 5% on the held-out cells alone) and Holm
over the arms on every cell.

Part 2 (adaptive allocation): sweeps where half of the arms are clearly worse (-20 points),
one is 15 (or 10) points better and the rest equal to the control, run in waves of one repeat
per cell; the bare baseline is the same sweeps with every arm run to the end. It prints
conversations spent by each, the saving, and the confirmation rates (which should agree).

Nothing is asserted (tests/tune asserts the bounds); this prints the README's tables.
Run: ``python benchmarks/bench_tune.py [--trials 1000]`` (~1 min).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalkit._simulate import Design
from evalkit._simulate._adaptive import adaptive_rates, simulate_adaptive
from evalkit._simulate._arms import draw_arms
from evalkit._simulate._tune_calibration import NOISY_GENERATOR, TUNE_DESIGN, sweep_rates
from evalkit.tuning._split import holdout_mask


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def calibration(trials: int) -> None:
    print(
        "| planted effects (K = 5) | confirmed (any) | truly best confirmed | other arm confirmed "
        "| plain split: best / other | Holm, all cells: best / other | trials |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = [(lead, None, "") for lead in (0.0, 5.0, 8.0, 10.0, 15.0)]
    rows += [(lead, NOISY_GENERATOR, ", noisy conversations") for lead in (0.0, 15.0)]
    for i, (lead, generator, label) in enumerate(rows):
        r = sweep_rates(
            TUNE_DESIGN,
            (lead, 0.0, 0.0, 0.0, 0.0),
            trials=trials,
            seed=100 + i,
            generator=generator,
        )
        print(
            f"| {r['effects']}{label} | {_pct(r['confirmed'])} | {_pct(r['best_confirmed'])} | "
            f"{_pct(r['other_confirmed'])} | {_pct(r['split_best_confirmed'])} / "
            f"{_pct(r['split_other_confirmed'])} | {_pct(r['holm_all_cells_best_confirmed'])} / "
            f"{_pct(r['holm_all_cells_other_confirmed'])} | {trials} |"
        )


def adaptive(trials: int) -> None:
    print(
        "| arms (planted effects) | max repeats | every arm to the end: conversations, "
        "confirmed | adaptive: conversations, confirmed | fewer | mean wave dropped (worse "
        "arms) | best arm dropped | trials |"
    )
    print("|---|---|---|---|---|---|---|---|")
    scenarios = (
        ((15.0, 0.0, -20.0, -20.0), 4),
        ((10.0, 0.0, -20.0, -20.0), 4),
        ((15.0, 0.0, -20.0, -20.0), 8),
        ((15.0, 0.0, 0.0, -20.0, -20.0, -20.0), 6),
        ((0.0, 0.0, 0.0, 0.0, 0.0), 4),
    )
    for i, (effects, repeats) in enumerate(scenarios):
        design = Design(f"36 x {repeats}", cells=36, repeats=repeats)
        hold = holdout_mask([f"cell-{c:03d}" for c in range(36)], 0.3, 0)
        codes = draw_arms(design, effects, trials=trials, seed=300 + i)
        best = int(np.argmax(effects)) if max(effects) > 0 else -1
        fixed = adaptive_rates(simulate_adaptive(codes, hold, adaptive=False), best)
        outcome = simulate_adaptive(codes, hold)
        moved = adaptive_rates(outcome, best)
        worse = [k for k, e in enumerate(effects) if e < 0]
        waves = outcome.dropped_at[:, worse] if worse else np.zeros((1, 1))
        mean_wave = float(waves[waves > 0].mean()) if (waves > 0).any() else float("nan")
        confirmed = "best_confirmed" if best >= 0 else "other_confirmed"
        print(
            f"| {'/'.join(f'{e:g}' for e in effects)} | {repeats} | "
            f"{fixed['conversations']:.0f}, {_pct(fixed[confirmed])} | "
            f"{moved['conversations']:.0f}, {_pct(moved[confirmed])} | "
            f"{_pct(1 - moved['conversations'] / fixed['conversations'])} | "
            f"{mean_wave:.2f} | {_pct(moved['best_dropped'])} | {trials} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    start = time.perf_counter()
    calibration(args.trials)
    print()
    adaptive(args.trials)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
