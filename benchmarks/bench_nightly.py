"""Nightly alarms when whole nights move: false ``regressed`` nights over 100 unchanged nights
and nights to flag a lasting drop, for the rule ``evalkit.history`` and ``nightly_alarms``
apply (``NightlyRule``: the between-night variance added), the rule before it (within-night
error only, two suspect nights in a row: the baseline the figures start from), an always-valid
e-detector over the same nightly statistic (the monitoring we measured and did not adopt) and
the naive gate (each night's 95% comparison against the last good night), on two grids and
three between-night standard deviations.

The grades come from this script's own generator (not evalkit's calibration generator): a grid
of cells (18 cells x 3 repeats, the demo's, or 60 cells x 1 repeat), the demo scorecard's 12
rules and points; a rule's pass probability is a logistic of a rule difficulty, a cell effect
and a conversation-level shock shared by the rules of one conversation (a call that goes wrong
fails several rules). Whole nights move: each night every logit shifts by one amount, chosen
so that the grid's expected score moves by a normal draw of SD 0, 1.65 or 3.5 points (a
provider or a judge drifting; ``--ar`` makes the draws an AR(1): nights that wander). A drop of
D points scales every pass probability so the grid's expected score falls by D. Each series
draws a new truth and 100 unchanged nights; at nights 10, 30 and 60 every gate's state is
copied and shown a lasting 10-point drop (6 nights) and a 20-point drop (1 night), the same
draws for every gate. Nothing is asserted (tests/compare/test_nightly_alarms.py asserts
bounds); this prints the tables the docs show, each rate with its Wilson 95% interval.

Run: ``python benchmarks/bench_nightly.py [--series 300] [--only-rule]`` (about 26 minutes at
300 on the 2 shared cores, 6 with ``--only-rule``).
"""

from __future__ import annotations

import argparse
import copy
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats as st

from evalkit.compare._alarms import AlarmWatch, NightlyRule, NightStatistic
from evalkit.compare._night_moments import Moments, Paired, paired
from evalkit.stats import wilson_interval

POINTS = np.array([5, 10, 10, 5, 15, 15, 10, 10, 5, 5, 5, 5], dtype=float)
WEIGHTS = POINTS / POINTS.sum()
SHOCK_P, SHOCK = 0.2, 2.0
GRIDS = {"18x3": (18, 3), "60x1": (60, 1)}
SDS = (0.0, 1.65, 3.5)


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


@dataclass(frozen=True)
class Truth:
    """One series' world: rule logits per cell ``(cells, rules)``, the grid, the between-night
    SD (points) and a scale on every pass probability (a drop)."""

    logits: NDArray[np.float64]
    repeats: int
    night_sd: float
    scale: float = 1.0
    ar: float = 0.0

    @classmethod
    def draw(
        cls, rng: np.random.Generator, cells: int, repeats: int, night_sd: float, ar: float = 0.0
    ) -> Truth:
        rules = len(POINTS)
        logits = (
            rng.normal(1.6, 0.9, size=(1, rules))
            + rng.normal(0.0, 0.7, size=(cells, 1))
            + rng.normal(0.0, 0.3, size=(cells, rules))
        )
        return cls(logits, repeats, night_sd, ar=ar)

    def expected(self, shift: NDArray[np.float64]) -> NDArray[np.float64]:
        """The grid's expected score (points) with every logit shifted by ``shift`` (nights)."""
        logit = self.logits[None, :, :] + shift[:, None, None]
        p = (1 - SHOCK_P) * _sigmoid(logit) + SHOCK_P * _sigmoid(logit - SHOCK)
        return np.asarray(100.0 * self.scale * (p * WEIGHTS).sum(axis=2).mean(axis=1))

    def shifts(self, rng: np.random.Generator, nights: int) -> NDArray[np.float64]:
        """Logit shifts that move the expected score by N(0, night_sd) points (Newton)."""
        if self.night_sd == 0:
            return np.zeros(nights)
        draws = rng.normal(0.0, 1.0, nights)
        if self.ar:  # an AR(1) drift of the same SD: nights that wander rather than jitter
            for t in range(1, nights):
                draws[t] = self.ar * draws[t - 1] + math.sqrt(1 - self.ar**2) * draws[t]
        target = self.expected(np.zeros(1))[0] + self.night_sd * draws
        shift = np.zeros(nights)
        for _ in range(6):
            h = 1e-4
            f = self.expected(shift) - target
            slope = (self.expected(shift + h) - self.expected(shift - h)) / (2 * h)
            shift = shift - f / slope
        return shift

    def dropped(self, points: float) -> Truth:
        base = float(self.expected(np.zeros(1))[0])
        return replace(self, scale=(base - points) / base)

    def nights(self, rng: np.random.Generator, count: int) -> NDArray[np.float64]:
        """Conversation scores ``(nights, cells, repeats)``."""
        cells = self.logits.shape[0]
        shift = self.shifts(rng, count)[:, None, None, None]
        shock = rng.random((count, cells, self.repeats, 1)) < SHOCK_P
        p = self.scale * _sigmoid(self.logits[None, :, None, :] + shift - SHOCK * shock)
        passed = rng.random(p.shape) < p
        return np.asarray(100.0 * (passed * WEIGHTS).sum(axis=3))


def _moments(scores: NDArray[np.float64]) -> list[Moments]:
    cells, repeats = scores.shape[1:]
    ids = np.repeat(np.array([f"c{c:02d}" for c in range(cells)]), repeats)
    return [Moments.of(ids, night.ravel()) for night in scores]


class Gate:
    """A gate watching one series: ``step(night)`` says whether it flags the night
    ``regressed``; copied (``copy.deepcopy``) to follow one series into several futures."""

    def step(self, night: Moments) -> bool:
        raise NotImplementedError


class RuleGate(Gate):
    """The nightly rule (``AlarmWatch``, what history and ``nightly_alarms`` apply)."""

    def __init__(self, rule: NightlyRule) -> None:
        self.watch, self.count = AlarmWatch(rule), 0

    def step(self, night: Moments) -> bool:
        self.count += 1
        return self.watch.observe_moments(f"n{self.count}", night).alarm == "regressed"


#: Shifts (in standard errors) the e-detector's mixture bets on, equal weights.
E_SHIFTS = np.array([1.0, 2.0, 3.0, 4.0])


class EDetector(AlarmWatch):
    """Always-valid monitoring of the same nightly statistic: an e-detector (Shin, Ramdas &
    Rinaldo 2022, "E-detectors: a nonparametric framework for sequential change detection",
    *New England J. Statist. Data Sci.*), the CUSUM form ``M = e * max(M, 1)`` over nightly
    e-values ``e = mean_k exp(-k z - k**2 / 2)`` (a likelihood-ratio mixture over drops of
    ``k`` standard errors; ``E[e] = 1`` when ``z`` is standard normal), alarming while
    ``M >= threshold``: an average run length of at least ``threshold`` nights with no change
    (Lorden 1971). A night with ``M > 1`` (evidence building) is kept out of the reference,
    as a suspect night is; the night's ``z`` is the rule's (between-night variance added)."""

    def __init__(self, rule: NightlyRule, threshold: float) -> None:
        super().__init__(rule)
        self.threshold, self.m = threshold, 1.0

    def decide(  # type: ignore[override]
        self, stat: NightStatistic | None, pair: NightStatistic | None
    ) -> tuple[str | None, str]:
        if stat is None or not math.isfinite(stat.z):
            return None, ""
        e = float(np.mean(np.exp(-E_SHIFTS * stat.z - E_SHIFTS**2 / 2)))
        self.m = e * max(self.m, 1.0)
        if self.m >= self.threshold:
            return "regressed", "e-detector"
        return ("suspect", "evidence") if self.m > 1.0 else (None, "")

    def _two_low(self, stat: NightStatistic, pair: NightStatistic) -> bool:
        return False


class EGate(RuleGate):
    def __init__(self, rule: NightlyRule, threshold: float) -> None:
        self.watch, self.count = EDetector(rule, threshold), 0


def _raw_pool(nights: list[Moments]) -> Moments:
    """The nights' conversations pooled as one night's (what the rule before did)."""
    cells = np.unique(np.concatenate([m.cells for m in nights]))
    n, total = np.zeros(len(cells)), np.zeros(len(cells))
    for m in nights:
        i = np.searchsorted(cells, m.cells)
        n[i] += m.n
        total[i] += m.n * m.mean
    mean = total / np.maximum(n, 1)
    ss = np.zeros(len(cells))
    for m in nights:
        i = np.searchsorted(cells, m.cells)
        ss[i] += m.ss + m.n * (m.mean - mean[i]) ** 2
    return Moments(cells, n, mean, ss, np.maximum(n - 1, 0))


def _z(one: Paired) -> float:
    return float(st.norm.ppf(st.t.cdf(one.difference / one.se, one.df))) if one.se else 0.0


class BeforeGate(Gate):
    """The rule as it was (the baseline these figures start from): the within-night error
    only, a reference of 5 good nights pooled as one, suspect at z <= -1.96 and regressed
    when a suspect night follows a flagged one, or at z <= -3.09."""

    def __init__(self) -> None:
        self.good: deque[Moments] = deque(maxlen=5)
        self.flagged = False

    def step(self, night: Moments) -> bool:
        alarm = None
        one = paired(_raw_pool(list(self.good)), night) if self.good else None
        if one is not None and math.isfinite(one.se) and one.difference <= -2.5:
            z = _z(one)
            if z <= -3.09 or (z <= -1.96 and self.flagged):
                alarm = "regressed"
            elif z <= -1.96:
                alarm = "suspect"
        self.flagged = alarm is not None
        if alarm is None:
            self.good.append(night)
        return alarm == "regressed"


class NaiveGate(Gate):
    """Each night's 95% comparison against the last night it did not flag (one side)."""

    def __init__(self) -> None:
        self.last: Moments | None = None

    def step(self, night: Moments) -> bool:
        one = paired(self.last, night) if self.last is not None else None
        hit = one is not None and math.isfinite(one.se) and _z(one) <= -1.96
        if not hit:
            self.last = night
        return hit


def gates(rule: NightlyRule, only_rule: bool) -> dict[str, Callable[[], Gate]]:
    if only_rule:
        return {"nightly rule (history)": lambda: RuleGate(rule)}
    return {
        "nightly rule (history)": lambda: RuleGate(rule),
        "the rule before (within-night error only)": BeforeGate,
        "e-detector, always valid (ARL >= 100 nights)": lambda: EGate(rule, 100.0),
        "e-detector (ARL >= 20 nights)": lambda: EGate(rule, 20.0),
        "naive 95% gate vs last good": NaiveGate,
    }


#: Nights a lasting drop is followed for the detection delay.
FOLLOW = 6
NIGHTS = 100


@dataclass(frozen=True)
class World:
    """One series: 100 unchanged nights and, at each onset, FOLLOW nights of a lasting
    10-point drop and one night of a 20-point drop (the same draws for every gate)."""

    nights: list[Moments]
    ten: dict[int, list[Moments]]
    twenty: dict[int, Moments]

    @classmethod
    def draw(
        cls, seed: int, grid: str, sd: float, onsets: tuple[int, ...], ar: float = 0.0
    ) -> World:
        rng = np.random.default_rng(seed)
        truth = Truth.draw(rng, *GRIDS[grid], sd, ar)
        nights = _moments(truth.nights(rng, NIGHTS))
        ten = {o: _moments(truth.dropped(10.0).nights(rng, FOLLOW)) for o in onsets}
        twenty = {o: _moments(truth.dropped(20.0).nights(rng, 1))[0] for o in onsets}
        return cls(nights, ten, twenty)


@dataclass
class Tally:
    """What one gate did over the series of one row."""

    false: list[int] = field(default_factory=list)  # flagged unchanged nights per series
    delays: dict[int, list[int]] = field(default_factory=dict)
    first: dict[int, list[bool]] = field(default_factory=dict)


def watch(make: Callable[[], Gate], world: World, onsets: tuple[int, ...], tally: Tally) -> None:
    """Run one gate over one series, forking it at each onset into the two drops."""
    gate, flagged = make(), 0
    for i, night in enumerate(world.nights):
        if i in onsets:
            ten = copy.deepcopy(gate)
            hits = [ten.step(bad) for bad in world.ten[i]]
            delay = hits.index(True) + 1 if True in hits else FOLLOW + 1
            tally.delays.setdefault(i, []).append(delay)
            tally.first.setdefault(i, []).append(copy.deepcopy(gate).step(world.twenty[i]))
        flagged += gate.step(night) and i > 0
    tally.false.append(flagged)


def _rate(hits: int, n: int) -> str:
    low, high = wilson_interval(hits, n)
    return f"{100 * hits / n:.2f} [{100 * low:.2f}, {100 * high:.2f}]"


def _pct(hits: int, n: int) -> str:
    low, high = wilson_interval(hits, n)
    return f"{hits / n:.1%} [{low:.1%}, {high:.1%}]"


def run(
    rule: NightlyRule, trials: int, grid: str, sd: float, onsets: tuple[int, ...], args: Any
) -> dict[str, Tally]:
    made = gates(rule, args.only_rule)
    tallies = {name: Tally() for name in made}
    for s in range(trials):
        world = World.draw(s, grid, sd, onsets, args.ar)
        for name, make in made.items():
            watch(make, world, onsets, tallies[name])
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=300, help="series (trials) per row")
    parser.add_argument("--onsets", type=int, nargs="+", default=[10, 30, 60])
    parser.add_argument("--grids", nargs="+", default=list(GRIDS))
    parser.add_argument("--sds", type=float, nargs="+", default=list(SDS))
    parser.add_argument("--only-rule", action="store_true", help="the nightly rule alone")
    parser.add_argument("--ar", type=float, default=0.0, help="AR(1) drift (0: independent)")
    defaults = NightlyRule()
    knobs = ("suspect_z", "single_z", "pair_z", "low_z", "window", "min_nights", "variance_window")
    for knob in knobs:
        kind = type(getattr(defaults, knob))
        parser.add_argument(
            f"--{knob.replace('_', '-')}", type=kind, default=getattr(defaults, knob)
        )
    args = parser.parse_args()
    rule = NightlyRule(**{knob: getattr(args, knob) for knob in knobs})
    onsets = tuple(o - 1 for o in args.onsets)  # night numbers count from 1
    print(f"rule: {rule}" + (f"; nights drift as an AR(1), phi {args.ar}" if args.ar else ""))
    started = time.perf_counter()
    rows = {
        (grid, sd): run(rule, args.series, grid, sd, onsets, args)
        for grid in args.grids
        for sd in args.sds
    }
    nights = args.series * (NIGHTS - 1)
    print(f"\n### {NIGHTS} unchanged nights: false `regressed` nights per 100 (Wilson 95%)\n")
    print("| grid | between-night SD | gate | per 100 nights | series with <= 1 |")
    print("|---|---|---|---|---|")
    for (grid, sd), tallies in rows.items():
        for name, tally in tallies.items():
            counts = np.array(tally.false)
            print(
                f"| {grid} | {sd:g} | {name} | {_rate(int(counts.sum()), nights)} | "
                f"{_pct(int((counts <= 1).sum()), args.series)} |"
            )
    print("\n### Lasting drops: caught (`regressed`) in time (Wilson 95%)\n")
    print(
        "| grid | between-night SD | drop starts at night | gate | 10-point drop within 2 "
        f"nights | 10-point drop: mean nights to flag (none in {FOLLOW}: {FOLLOW + 1}) | "
        "20-point drop on its first night |"
    )
    print("|---|---|---|---|---|---|---|")
    for (grid, sd), tallies in rows.items():
        for onset in onsets:
            for name, tally in tallies.items():
                delays = np.array(tally.delays[onset])
                first = int(np.sum(tally.first[onset]))
                print(
                    f"| {grid} | {sd:g} | {onset + 1} | {name} | "
                    f"{_pct(int((delays <= 2).sum()), args.series)} | {delays.mean():.2f} | "
                    f"{_pct(first, args.series)} |"
                )
    print(f"\n{args.series} series per row; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
