"""Latency comparisons on the demo's grid: A/A false alarms, power and coverage, three methods.

Trials come from the independent generator in ``tests/latency_world.py`` (18 cells x 3 repeats
a side, 2-6 agent answers per conversation around 1.2 s, shared cell effects, conversation
effects, log-t turn noise with 3 degrees of freedom and occasional multi-second stalls; with
``--drifts``, each side's level in each cell drifts on its own by that log-scale SD, 0.15 being
about 15%); every agent answer of the candidate is ``shift`` seconds slower, so every quantile's
true difference is the shift. The same trials go through each method:

- ``typical``: ``compare_latency``'s default: the percentile rows of ``cell_bootstrap`` and
  the typical-latency row (a paired t test over cells on each cell's mean log latency), the
  overall verdict by Holm's weighted step-down over the three rows (the typical row first at
  half of the 5%, the quantile rows a quarter each);
- ``typical_unweighted``: the same rows, Holm's unweighted step-down (each row first at 5%/3;
  ``LatencyOptions(typical_weight=1/3)``); ``typical@w`` sets ``typical_weight=w``;
- ``cell_bootstrap``: the previous default's rows, percentile rows only (``LatencyOptions(
  typical=False)``: paired cluster bootstrap over cells, expanded percentile interval; the
  overall verdict by Holm over p50 and p95, which calls whatever the previous default's
  Bonferroni intervals called, and a little more);
- ``two_stage_bootstrap``: the earlier default (cells, then conversations within cells);
- ``mixed_model``: a linear mixed model on log latency (statsmodels ``MixedLM``, REML: a fixed
  candidate effect, a random intercept and candidate slope per cell, a conversation variance
  component; Laird & Ware 1982), its Wald interval on Student's t with cells - 1 degrees of
  freedom, turned into seconds at the baseline's p50 and p95 (``b_q * (exp(beta) - 1)``: a
  common ratio, the model's assumption). Needs ``statsmodels`` (not an evalkit dependency);
  skipped without it. One test, so its overall verdict is its p50 row's.

Every comparison uses the defaults (p50 and p95, 95%, ``min_effect_s`` 0.25). Per row: the
share of trials whose p50 / p95 / typical row and whose overall verdict call a difference
(``regressed``; at shift 0 ``improved`` counts too: false alarms), each with a 95% Wilson
interval; how often the p50 / p95 interval covers the true difference (the shift); how often
the typical row's ratio interval covers the true ratio of geometric means (``exp`` of the mean
of ``log(x + shift) - log(x)`` over a million of the generator's answers) and its seconds
interval the shift; the median p50 interval width; the time per comparison. Nothing is asserted (tests/compare/test_latency.py asserts binomial bounds).
Run: ``python benchmarks/bench_latency.py [--trials 500]`` (~5 min on two shared cores without
the mixed model, which adds ~30 min; ``--methods`` and ``--shifts`` narrow it).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.compare import LatencyOptions, compare_latency, decide
from evalkit.stats import wilson_interval
from tests.latency_world import LatencyWorld

SHIFTS = (0.0, 0.1, 0.2, 0.3, 0.5)
METHODS = ("typical", "typical_unweighted", "cell_bootstrap", "two_stage_bootstrap", "mixed_model")
MIN_EFFECT_S = 0.25

#: the typical row: its ratio interval, its seconds interval and its verdict
Typical = tuple[tuple[float, float], tuple[float, float], str]
#: one trial's outcome: per quantile (p50, p95) its interval and verdict, the typical row (None
#: without one) and the overall verdict
Outcome = tuple[list[tuple[float, float, str]], Typical | None, str]


def _bootstrap(method: str, resamples: int) -> Callable[[pd.DataFrame, pd.DataFrame, int], Outcome]:
    typical = method.startswith("typical")
    interval = "cell_bootstrap" if typical else method
    weight = {"typical_unweighted": 1 / 3}.get(method, LatencyOptions.typical_weight)
    if method.startswith("typical@"):
        weight = float(method.removeprefix("typical@"))

    def run(base: pd.DataFrame, cand: pd.DataFrame, seed: int) -> Outcome:
        opts = LatencyOptions(
            method=interval,  # type: ignore[arg-type]
            typical=typical,
            typical_weight=weight,
            n_resamples=resamples,
            seed=seed,
        )
        r = compare_latency(base, cand, options=opts)
        rows = [
            (row.difference_low, row.difference_high, row.verdict)
            for row in r.summary.itertuples(index=False)
            if row.quantile != "typical"
        ]
        found = None
        if r.typical is not None:
            last = r.summary.iloc[-1]
            found = (
                (r.typical["ratio_low"], r.typical["ratio_high"]),
                (float(last["difference_low"]), float(last["difference_high"])),
                str(last["verdict"]),
            )
        return rows, found, r.verdict.value

    return run


def _mixed_model(base: pd.DataFrame, cand: pd.DataFrame, seed: int) -> Outcome:
    import statsmodels.formula.api as smf

    del seed  # no randomness
    frame = pd.concat(
        [
            base.assign(candidate=0.0),
            cand.assign(candidate=1.0, conversation_id=cand["conversation_id"] + "/candidate"),
        ],
        ignore_index=True,
    )
    frame["log_latency"] = np.log(frame["latency_s"])
    model = smf.mixedlm(
        "log_latency ~ candidate",
        frame,
        groups="cell_id",
        re_formula="~candidate",
        vc_formula={"conversation": "0 + C(conversation_id)"},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # boundary fits (a variance at zero) warn; still valid
        fit = model.fit(reml=True, method=["lbfgs"])
    beta, se = float(fit.fe_params["candidate"]), float(fit.bse_fe["candidate"])
    cells = frame["cell_id"].nunique()
    t = float(stats.t.ppf(0.975, cells - 1))
    rows = []
    for q in (0.5, 0.95):
        at = float(np.quantile(base["latency_s"], q, method="inverted_cdf"))
        low, high = at * math.expm1(beta - t * se), at * math.expm1(beta + t * se)
        # the shared rule table reads "higher is better": a speed-up is minus the difference
        rows.append((low, high, str(decide(-high, -low, MIN_EFFECT_S))))
    return rows, None, rows[0][2]


def true_ratio(world: LatencyWorld, shift: float, answers: int = 1_000_000) -> float:
    """The typical row's estimand: ``exp(E[log(x + shift) - log(x)])`` over the generator's
    baseline answers (what the candidate's ``shift`` seconds do to the mean log latency)."""
    rng = np.random.default_rng(7)
    big = replace(world, cells=max(1, answers // (4 * world.repeats)))
    values = big.side(rng, big.cell_effects(rng))["latency_s"].to_numpy()
    return float(np.exp(np.mean(np.log(values + shift) - np.log(values))))


@dataclass
class Tally:
    """What one (method, drift, shift) row counts over its trials."""

    called: list[int] = field(default_factory=lambda: [0, 0, 0])
    covered: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    typical: bool = False
    overall: int = 0
    widths: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome: Outcome, truth: tuple[float, float], seconds: float) -> None:
        """One trial; ``truth``: the shift (seconds) and the true ratio of geometric means."""
        rows, typical, verdict = outcome
        shift, ratio = truth
        wrong = ("improved", "regressed") if shift == 0 else ("regressed",)
        for i, (low, high, row_verdict) in enumerate(rows):
            self.called[i] += row_verdict in wrong
            self.covered[i] += bool(low <= shift <= high)
        if typical is not None:
            (r_low, r_high), (s_low, s_high), row_verdict = typical
            self.typical = True
            self.called[2] += row_verdict in wrong
            self.covered[2] += bool(r_low <= ratio <= r_high)
            self.covered[3] += bool(s_low <= shift <= s_high)
        self.widths.append(rows[0][1] - rows[0][0])
        self.overall += verdict in wrong
        self.seconds += seconds


def _share(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _row(method: str, drift: float, shift: float, tally: Tally, n: int) -> str:
    label = f"{shift:.1f} (A/A)" if shift == 0 else f"{shift:.1f}"
    typical_called, typical_covers = "-", "-"
    if tally.typical:
        typical_called = _share(tally.called[2], n)
        typical_covers = f"{100 * tally.covered[2] / n:.1f}% / {100 * tally.covered[3] / n:.1f}%"
    return (
        f"| {method} | {100 * drift:.0f}% | {label} | {_share(tally.called[0], n)} | "
        f"{_share(tally.called[1], n)} | {typical_called} | **{_share(tally.overall, n)}** | "
        f"{100 * tally.covered[0] / n:.1f}% | {100 * tally.covered[1] / n:.1f}% | "
        f"{typical_covers} | {np.median(tally.widths):.2f} s | {1000 * tally.seconds / n:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--drifts", default="0,0.15", help="log-scale SDs of per-cell drift")
    parser.add_argument("--shifts", default=",".join(f"{s:g}" for s in SHIFTS))
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    methods: dict[str, Callable[[pd.DataFrame, pd.DataFrame, int], Outcome]] = {}
    for name in args.methods.split(","):
        if name == "mixed_model":
            try:
                import statsmodels  # noqa: F401
            except ImportError:
                print("mixed_model: skipped (needs statsmodels: pip install statsmodels)")
                continue
            methods[name] = _mixed_model
        else:
            methods[name] = _bootstrap(name, args.resamples)
    drifts = [float(d) for d in args.drifts.split(",")]
    shifts = [float(s) for s in args.shifts.split(",")]
    print(
        f"{args.trials} trials per row, {args.resamples} resamples, demo grid 18 x 3 a side, "
        "95% Wilson intervals"
    )
    print(
        "| method | per-cell drift | slowdown (s) | p50 called | p95 called | typical called | "
        "overall `regressed` | p50 covers | p95 covers | typical covers (ratio / s) | "
        "p50 CI width | ms / comparison |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for drift in drifts:
        world = replace(LatencyWorld(), cell_drift_sd=drift)
        for shift in shifts:
            truth = (shift, true_ratio(world, shift))
            tallies = {name: Tally() for name in methods}
            for t in range(args.trials):
                base, cand = world.pair(10_000 + t, shift)
                for name, method in methods.items():
                    t0 = time.perf_counter()
                    outcome: Any = method(base, cand, t)
                    tallies[name].add(outcome, truth, time.perf_counter() - t0)
            for name, tally in tallies.items():
                print(_row(name, drift, shift, tally, args.trials), flush=True)


if __name__ == "__main__":
    main()
