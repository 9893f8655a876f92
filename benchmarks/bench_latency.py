"""Latency comparisons on the demo's grid: A/A false alarms, power and coverage, three methods.

Trials come from the independent generator in ``tests/latency_world.py`` (18 cells x 3 repeats
a side, 2-6 agent answers per conversation around 1.2 s, shared cell effects, conversation
effects, log-t turn noise with 3 degrees of freedom and occasional multi-second stalls; with
``--drifts``, each side's level in each cell drifts on its own by that log-scale SD, 0.15 being
about 15%); every agent answer of the candidate is ``shift`` seconds slower, so every quantile's
true difference is the shift. The same trials go through each method:

- ``cell_bootstrap``: ``compare_latency``'s default (paired cluster bootstrap over cells,
  expanded percentile interval);
- ``two_stage_bootstrap``: the earlier default (cells, then conversations within cells);
- ``mixed_model``: a linear mixed model on log latency (statsmodels ``MixedLM``, REML: a fixed
  candidate effect, a random intercept and candidate slope per cell, a conversation variance
  component; Laird & Ware 1982), its Wald interval on Student's t with cells - 1 degrees of
  freedom, turned into seconds at the baseline's p50 and p95 (``b_q * (exp(beta) - 1)``: a
  common ratio, the model's assumption). Needs ``statsmodels`` (not an evalkit dependency);
  skipped without it. One test, so its overall verdict is its p50 row's.

Every comparison uses the defaults (p50 and p95, 95%, ``min_effect_s`` 0.25). Per row: the
share of trials whose p50 / p95 row and whose overall verdict call a difference (``regressed``;
at shift 0 ``improved`` counts too: false alarms), each with a 95% Wilson interval; how often
the p50 / p95 interval covers the true difference; the median p50 interval width; the time per
comparison. Nothing is asserted (tests/compare/test_latency.py asserts binomial bounds).
Run: ``python benchmarks/bench_latency.py [--trials 400]`` (~30-60 min on two shared cores;
``--methods`` and ``--shifts`` narrow it).
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
METHODS = ("cell_bootstrap", "two_stage_bootstrap", "mixed_model")
MIN_EFFECT_S = 0.25

#: one trial's outcome: per quantile (p50, p95) its interval and verdict, and the overall verdict
Outcome = tuple[list[tuple[float, float, str]], str]


def _bootstrap(method: str, resamples: int) -> Callable[[pd.DataFrame, pd.DataFrame, int], Outcome]:
    def run(base: pd.DataFrame, cand: pd.DataFrame, seed: int) -> Outcome:
        opts = LatencyOptions(method=method, n_resamples=resamples, seed=seed)  # type: ignore[arg-type]
        r = compare_latency(base, cand, options=opts)
        rows = [
            (row.difference_low, row.difference_high, row.verdict)
            for row in r.summary.itertuples(index=False)
        ]
        return rows, r.verdict.value

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
    return rows, rows[0][2]


@dataclass
class Tally:
    """What one (method, drift, shift) row counts over its trials."""

    called: list[int] = field(default_factory=lambda: [0, 0])
    covered: list[int] = field(default_factory=lambda: [0, 0])
    overall: int = 0
    widths: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome: Outcome, shift: float, seconds: float) -> None:
        rows, verdict = outcome
        wrong = ("improved", "regressed") if shift == 0 else ("regressed",)
        for i, (low, high, row_verdict) in enumerate(rows):
            self.called[i] += row_verdict in wrong
            self.covered[i] += bool(low <= shift <= high)
        self.widths.append(rows[0][1] - rows[0][0])
        self.overall += verdict in wrong
        self.seconds += seconds


def _share(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _row(method: str, drift: float, shift: float, tally: Tally, n: int) -> str:
    label = f"{shift:.1f} (A/A)" if shift == 0 else f"{shift:.1f}"
    return (
        f"| {method} | {100 * drift:.0f}% | {label} | {_share(tally.called[0], n)} | "
        f"{_share(tally.called[1], n)} | **{_share(tally.overall, n)}** | "
        f"{100 * tally.covered[0] / n:.1f}% | {100 * tally.covered[1] / n:.1f}% | "
        f"{np.median(tally.widths):.2f} s | {1000 * tally.seconds / n:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
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
        "| method | per-cell drift | slowdown (s) | p50 called | p95 called | overall "
        "`regressed` | p50 covers | p95 covers | p50 CI width | ms / comparison |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for drift in drifts:
        world = replace(LatencyWorld(), cell_drift_sd=drift)
        for shift in shifts:
            tallies = {name: Tally() for name in methods}
            for t in range(args.trials):
                base, cand = world.pair(10_000 + t, shift)
                for name, method in methods.items():
                    t0 = time.perf_counter()
                    outcome: Any = method(base, cand, t)
                    tallies[name].add(outcome, shift, time.perf_counter() - t0)
            for name, tally in tallies.items():
                print(_row(name, drift, shift, tally, args.trials), flush=True)


if __name__ == "__main__":
    main()
