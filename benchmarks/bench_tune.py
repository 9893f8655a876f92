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

Part 3 (the winner's gain, on the gain's own generator, :mod:`tests.simulate._gain`): sweeps
of 5 arms on 36 cells x 4 waves where every arm is truly +5, +10 or 0 points, and over the
confirmed winners what each number reports against the truth: the all-cells difference (the
headline before), the held-out difference, the difference on 2 fresh repeats of every cell
(the headline now) with how often its 95% interval holds the truth, and the
selection-adjusted held-out difference (the gain of ``compare_variants``, or without fresh
repeats). Rates carry Wilson 95% intervals.

Nothing is asserted (tests/tune asserts the bounds); this prints the docs' tables.
Run: ``python benchmarks/bench_tune.py [--trials 1000] [--gain-sweeps 4000]`` (~2 min).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run as `python benchmarks/NAME.py`: the repository root holds the tests' generators
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.tuning._split import holdout_mask
from tests.simulate import Design
from tests.simulate._adaptive import adaptive_rates, simulate_adaptive
from tests.simulate._arms import draw_arms
from tests.simulate._gain import GainDesign, gain_row
from tests.simulate._tune_calibration import NOISY_GENERATOR, TUNE_DESIGN, sweep_rates


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


def gain(sweeps: int) -> None:
    design = GainDesign("36 cells x 4 waves, 5 arms", cells=36, max_repeats=4)
    rows = []
    for i, effect in enumerate((5.0, 10.0, 0.0)):
        row = gain_row(design, [[effect] * 5], trials=sweeps, seed=500 * (i + 1))
        rows.append({"every arm truly": f"{effect:+g}", "sweeps": row.pop("searches"), **row})
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        cells = [
            f"{v:+.1f}"
            if isinstance(v, float) and v == v
            else ("-" if isinstance(v, float) else str(v))
            for v in row.values()
        ]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--gain-sweeps", type=int, default=4000)
    args = parser.parse_args()
    start = time.perf_counter()
    calibration(args.trials)
    print()
    adaptive(args.trials)
    print()
    gain(args.gain_sweeps)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
