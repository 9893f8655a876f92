"""Nightly alarms on the demo's grid: false alarms over 100 unchanged nights, and nights to flag
a lasting drop, for the confirmation rule ``evalkit.history`` uses (``NightlyRule``) and for the
naive gate it replaces (each night's 95% comparison against the last-known-good night).

The grades come from this script's own generator (not evalkit's calibration generator): 18
cells (6 personas x 3 contacts) x 3 repeats, the demo scorecard's 12 rules and points; a
rule's pass probability is a logistic of a rule difficulty, a cell effect and a
conversation-level shock shared by the rules of one conversation (a call that goes wrong
fails several rules). A drop of D points scales every pass probability so the grid's expected
score falls by D. Each trial draws a new truth. Nothing is asserted (tests/compare/
test_nightly_alarms.py asserts bounds); this prints the table README shows.
Run: ``python benchmarks/bench_nightly.py [--trials 300]`` (~1 min at 300 on 2 cores).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from evalkit.compare._alarms import AlarmWatch, NightlyRule

POINTS = np.array([5, 10, 10, 5, 15, 15, 10, 10, 5, 5, 5, 5], dtype=float)
CELLS, REPEATS = 18, 3


@dataclass
class Truth:
    """Pass probabilities ``(cells, rules)`` before the shock, and the shock's size."""

    logits: NDArray[np.float64]
    shock_p: float
    scale: float = 1.0

    @classmethod
    def draw(cls, rng: np.random.Generator) -> Truth:
        rules = len(POINTS)
        logits = (
            rng.normal(1.6, 0.9, size=(1, rules))
            + rng.normal(0.0, 0.7, size=(CELLS, 1))
            + rng.normal(0.0, 0.3, size=(CELLS, rules))
        )
        return cls(logits=logits, shock_p=0.2)

    def night(self, rng: np.random.Generator) -> pd.DataFrame:
        """One night: conversation scores with their cell."""
        shock = rng.random((CELLS, REPEATS, 1)) < self.shock_p
        logit = self.logits[:, None, :] - 2.0 * shock
        p = self.scale / (1.0 + np.exp(-logit))
        passed = rng.random(p.shape) < p
        score = 100.0 * (passed * POINTS).sum(axis=2) / POINTS.sum()
        cells = np.repeat(np.arange(CELLS), REPEATS)
        return pd.DataFrame({"cell_id": cells.astype(str), "score": score.ravel()})

    def expected(self, rng: np.random.Generator, draws: int = 40) -> float:
        return float(np.mean([self.night(rng)["score"].mean() for _ in range(draws)]))

    def dropped(self, points: float, rng: np.random.Generator) -> Truth:
        base = self.expected(rng)
        return Truth(self.logits, self.shock_p, (base - points) / base)


def _naive(stat_z: float | None) -> bool:
    return stat_z is not None and stat_z <= -1.96  # a two-sided 95% check, one side flagged


def trial(
    seed: int, drop: float, nights: int, onset: int, rule: NightlyRule | None = None
) -> dict[str, list[bool]]:
    """Flags per night for the rule and the naive gate (the drop starts at night ``onset``)."""
    rng = np.random.default_rng(seed)
    truth = Truth.draw(rng)
    bad = truth.dropped(drop, rng) if drop else truth
    watch = AlarmWatch(rule or NightlyRule())
    naive = AlarmWatch(NightlyRule(window=1, suspect_z=1.96, single_z=1.96, floor=0.0))
    flags: dict[str, list[bool]] = {"rule": [], "naive": []}
    for night in range(nights):
        scores = (bad if night >= onset else truth).night(rng)
        _, alarm = watch.observe(f"n{night}", scores)
        flags["rule"].append(alarm == "regressed")
        stat, _ = naive.observe(f"n{night}", scores)
        flags["naive"].append(_naive(None if stat is None else stat.z))
    return flags


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--suspect-z", type=float, default=NightlyRule().suspect_z)
    args = parser.parse_args()
    rule = NightlyRule(suspect_z=args.suspect_z)
    print(f"rule: {rule}")
    started = time.perf_counter()
    print(
        "| gate | 100 unchanged nights: nights flagged (mean) | trials with <= 1 flagged | "
        "10-point drop flagged within 2 nights | 20-point drop flagged on night 1 |"
    )
    print("|---|---|---|---|---|")
    null = [trial(seed, 0.0, 100, 100, rule) for seed in range(args.trials)]
    onset = 5
    ten = [trial(10_000 + s, 10.0, onset + 2, onset, rule) for s in range(args.trials)]
    twenty = [trial(20_000 + s, 20.0, onset + 1, onset, rule) for s in range(args.trials)]
    for gate in ("rule", "naive"):
        counts = np.array([sum(t[gate]) for t in null])
        within2 = np.mean([any(t[gate][onset : onset + 2]) for t in ten])
        first = np.mean([t[gate][onset] for t in twenty])
        name = "confirmation rule (history)" if gate == "rule" else "naive 95% gate vs last good"
        print(
            f"| {name} | {counts.mean():.2f} | {np.mean(counts <= 1):.0%} | "
            f"{within2:.0%} | {first:.0%} |"
        )
    print(f"\n{args.trials} trials per column; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
