"""Calibration of the verdict in every design: false alarms, power, coverage, n trials.

For each design of ``tests.simulate._calibration.CALIBRATION_DESIGNS`` (the demo's 18 x 3,
one repeat per cell, mixed and unbalanced repeats, cells on one side only, repeats that agree,
informative judge errors) it generates ``--trials`` A/A comparisons and as many with a planted
15-point drop (``GradeGenerator``: a new truth every trial), decides each exactly as
``compare_grades`` does, and prints a table: false alarms (headline, per-rule family-wise,
per-persona family-wise), A/A non-inferiority, power, coverage of the truth, and the interval's
health. Then non-inferiority at and around its margin (a candidate truly ``min_effect`` worse,
truly 2.5 points worse, unchanged, truly 5 points better: how often it is shown non-inferior,
with 95% Wilson intervals), and ``plan_repeats``: the power the planned repeats deliver on
average over pilots. Nothing is asserted (the tests assert binomial bounds); this prints the
figures the documentation shows.
Run: ``python benchmarks/bench_calibration.py [--trials 4000] [--parts designs,non-inferiority,planning]``
(~2-4 min for all three).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run as `python benchmarks/NAME.py`: the repository root holds the tests' generators
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.compare import RepeatPlanOptions, Verdict, plan_repeats
from evalkit.compare._decision import Scenarios, decide_grid, errors_differ, scenario_scores
from evalkit.stats import CellMoments, wilson_interval
from tests.simulate import SyntheticTruth, calibrate, synthetic_grades
from tests.simulate._calibration import CALIBRATION_DESIGNS


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def designs(trials: int) -> None:
    print(
        "| design | method | A/A false alarms | per-rule (family) | per-persona (family) | "
        "A/A non-inferior | power, 15-point drop | coverage (A/A, drop) | NaN / zero-width / "
        "beyond +-100 | trials |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, design in enumerate(CALIBRATION_DESIGNS):
        aa = calibrate(design, 0.0, trials=trials, seed=1000 + i)
        drop = calibrate(design, -15.0, trials=trials, seed=2000 + i)
        health = aa["nan"] + drop["nan"], aa["zero_width"] + drop["zero_width"]
        oob = aa["out_of_scale"] + drop["out_of_scale"]
        print(
            f"| {design.name} | {aa['method']} | {_pct(aa['alarm'])} "
            f"(improved {_pct(aa['improved'])}) | {_pct(aa['rule_alarm'])} | "
            f"{_pct(aa['persona_alarm'])} | {_pct(aa['non_inferior'])} | "
            f"{_pct(drop['regressed'])} | {_pct(aa['coverage'])}, {_pct(drop['coverage'])} | "
            f"{health[0]:.0f} / {health[1]:.0f} / {oob:.0f} | {trials} + {trials} |"
        )


def _rate(share: float, trials: int) -> str:
    """A share of trials with its 95% Wilson interval, in percent."""
    low, high = wilson_interval(round(share * trials), trials)
    return f"{100 * share:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


#: True differences (points) around the non-inferiority margin of 5 points.
NI_EFFECTS = (-5.0, -2.5, 0.0, 5.0)


def non_inferiority(trials: int) -> None:
    print()
    print(
        "| design | shown non-inferior when truly -5 (at the margin: false claims) | "
        "truly -2.5 | truly 0 | truly +5 | trials a column |"
    )
    print("|---|---|---|---|---|---|")
    for i, design in enumerate(CALIBRATION_DESIGNS):
        rates = [
            calibrate(design, effect, trials=trials, seed=3000 + 10 * i + j)["non_inferior"]
            for j, effect in enumerate(NI_EFFECTS)
        ]
        cells = " | ".join(_rate(r, trials) for r in rates)
        print(f"| {design.name} | {cells} | {trials} |")


def _power(truth: SyntheticTruth, effect: float, repeats: int, seed: int, trials: int) -> float:
    base, cand = truth.shifted(effect / 2), truth.shifted(-effect / 2)
    points = np.asarray(truth.points)

    def scen(codes: np.ndarray) -> Scenarios:
        return Scenarios(*(CellMoments.from_values(x) for x in scenario_scores(codes, points)))

    def errs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.full(codes.shape[0], codes.shape[1] * codes.shape[2])
        return (codes == 3).any(axis=-1).sum(axis=(-1, -2)), n

    a, b = base.simulate(trials, repeats, seed), cand.simulate(trials, repeats, seed + 1)
    d = decide_grid(scen(a), scen(b), bounded=errors_differ(errs(a), errs(b)))
    return float((np.asarray(d.verdict) == Verdict.REGRESSED).mean())


def planning(pilots: int, trials: int) -> None:
    print()
    print("| effect | asked | planned repeats (18 cells) | delivered power, mean over pilots |")
    print("|---|---|---|---|")
    truth = SyntheticTruth.demo(seed=2)
    for effect in (6.0, 10.0, 15.0):
        plans = [
            plan_repeats(
                synthetic_grades(truth, repeats=3, seed=5000 + i),
                options=RepeatPlanOptions(effect=effect),
            )
            for i in range(pilots)
        ]
        planned = [int(p.repeats_per_cell or 0) for p in plans]
        power = {r: _power(truth, effect, r, 77 + r, trials) for r in sorted(set(planned))}
        mean = float(np.mean([power[r] for r in planned]))
        print(
            f"| {effect:g} points | 90% | {min(planned)}-{max(planned)} "
            f"(median {int(np.median(planned))}) | {_pct(mean)} ({pilots} pilots of 18 x 3) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--pilots", type=int, default=100)
    parser.add_argument(
        "--parts",
        default="designs,non-inferiority,planning",
        help="comma-separated: designs, non-inferiority, planning",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    start = time.perf_counter()
    if "designs" in parts:
        designs(args.trials)
    if "non-inferiority" in parts:
        non_inferiority(args.trials)
    if "planning" in parts:
        planning(args.pilots, args.trials // 2)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
