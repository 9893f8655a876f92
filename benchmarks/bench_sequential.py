"""Sequential comparisons against the fixed design of the same maximum, on the demo's grid.

For drops of 0, 5, 10, 15 and 20 points on 18 cells with at most 6 repeats (``GradeGenerator``:
a new truth every trial), each trial looks after every wave exactly as ``compare_sequential``
does and stops at the first deciding look; the same trials are also decided once at 6 repeats.
Prints false alarms (effect 0) or power, mean conversations and the share saved, for the
default plan (group-sequential, Hwang-Shih-DeCani gamma -4 alpha spending, linear
beta-spending futility) and for the always-valid confidence sequence; then the naive
alternative: re-checking a fixed comparison after every repeat from 2 to 8; and a plan that stops
as soon as non-inferiority is shown (``stop_when_non_inferior``), for a candidate exactly
``min_effect`` worse (false claims) and for one unchanged, with 95% Wilson intervals. Nothing is
asserted (tests assert binomial bounds); this prints the tables the documentation shows.
Run: ``python benchmarks/bench_sequential.py [--trials 2000] [--parts table,peeking,non-inferior]``
(~2 min at 2000 for all three).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run as `python benchmarks/NAME.py`: the repository root holds the tests' generators
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalkit.compare import SequentialPlan, Verdict
from evalkit.stats import wilson_interval
from tests.simulate import Design, calibrate_sequential
from tests.simulate._calibration import _look_headline
from tests.simulate._generator import GradeGenerator

DEMO = Design("demo grid, 18 cells x at most 6 repeats", repeats=6)
EFFECTS = (0.0, -5.0, -10.0, -15.0, -20.0)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table(trials: int) -> None:
    print(
        "| method | drop (points) | false alarms / power | fixed design (6 repeats) | "
        "mean conversations | fixed | saved | stopped for (efficacy / futility / last look) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for method in ("group_sequential", "confidence_sequence"):
        plan = SequentialPlan(6, method=method)
        for i, effect in enumerate(EFFECTS):
            r = calibrate_sequential(DEMO, plan, effect, trials=trials, seed=500 + i)
            rate, fixed = (
                (r["alarm"], r["fixed_alarm"]) if effect == 0 else (r["power"], r["fixed_power"])
            )
            why = r["stopped_for"]
            print(
                f"| {method.replace('_', '-')} | {abs(effect):g} | {_pct(rate)} | {_pct(fixed)} | "
                f"{r['conversations']:.0f} | {r['fixed_conversations']:.0f} | "
                f"{_pct(r['saved'])} | {_pct(why['efficacy'])} / {_pct(why['futility'])} / "
                f"{_pct(why['last look'])} |"
            )


def peeking(trials: int) -> None:
    grades = GradeGenerator().draw(Design("8 repeats", repeats=8), trials, 77, 0.0)
    alarmed = np.zeros(trials, dtype=bool)
    for look in range(2, 9):
        h = _look_headline(grades, look, 0.95, 5.0)
        alarmed |= np.isin(h.verdict, [Verdict.IMPROVED, Verdict.REGRESSED])
    plan = calibrate_sequential(
        Design("8 repeats", repeats=8), SequentialPlan(8), 0.0, trials=trials, seed=77
    )
    print(
        f"\nA/A, looking after every repeat from 2 to 8: a fixed 95% comparison each time "
        f"{_pct(alarmed.mean())}; a sequential plan over the same looks {_pct(plan['alarm'])} "
        f"({trials} trials)"
    )


def _rate(share: float, trials: int) -> str:
    """A share of trials with its 95% Wilson interval, in percent."""
    low, high = wilson_interval(round(share * trials), trials)
    return f"{100 * share:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def non_inferior(trials: int) -> None:
    print(
        "\n| true difference (points) | stopped: non-inferior | verdict improved or regressed | "
        "mean conversations | saved | plain plan's saving | trials |"
    )
    print("|---|---|---|---|---|---|---|")
    for i, effect in enumerate((-5.0, 0.0)):
        gate = calibrate_sequential(
            DEMO, SequentialPlan(6, stop_when_non_inferior=True), effect, trials=trials, seed=41 + i
        )
        plain = calibrate_sequential(DEMO, SequentialPlan(6), effect, trials=trials, seed=41 + i)
        print(
            f"| {effect:+g} | {_rate(gate['stopped_for']['non-inferior'], trials)} | "
            f"{_rate(gate['alarm'], trials)} | {gate['conversations']:.0f} | "
            f"{_pct(gate['saved'])} | {_pct(plain['saved'])} | {trials} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument(
        "--parts",
        default="table,peeking,non-inferior",
        help="comma-separated: table, peeking, non-inferior",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    start = time.perf_counter()
    if "table" in parts:
        table(args.trials)
    if "peeking" in parts:
        peeking(args.trials)
    if "non-inferior" in parts:
        non_inferior(args.trials)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
