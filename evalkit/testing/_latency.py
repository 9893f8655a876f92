"""``assert_latency``: agent response time against a bar or a baseline run.

Against a bar: the run's agent p95 latency is compared with a side whose every answer takes
exactly the bar, in each of the run's cells, by :func:`evalkit.compare.compare_latency` (its
cell bootstrap, paired by cell): the constant side adds no variance, so the interval
of the difference is the interval of the run's p95 minus the bar. Passes when the whole
interval is below zero (p95 shown under the bar), fails when it is above (shown over it).

Against a baseline: ``compare_latency(baseline, run)``; fails on ``regressed`` (slower
beyond its minimum effect), passes on ``no_difference`` or ``improved``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..compare import LatencyComparison, LatencyOptions, Verdict, compare_latency
from ..store import Run
from ._check import Check, Outcome, settle
from ._options import AssertOptions

__all__ = ["assert_latency"]

_QUANTILE = "p95"


def _bar_side(run: Run, bar: float) -> pd.DataFrame:
    """One answer of exactly ``bar`` seconds in each cell the run has a done conversation in."""
    conversations = run.conversations
    cells = sorted(
        conversations.loc[conversations["status"] == "done", "cell_id"].astype(str).unique()
    )
    return pd.DataFrame(
        {
            "conversation_id": [f"bar-{cell}" for cell in cells],
            "cell_id": cells,
            "latency_s": float(bar),
        }
    )


def _row(result: LatencyComparison) -> dict[str, Any]:
    table = result.table.set_index("quantile")
    return dict(table.loc[_QUANTILE])


def _left_out(run: Run) -> str:
    status = run.conversations["status"]
    counts = status[status != "done"].value_counts()
    outs = ", ".join(f"{int(n)} {s}" for s, n in sorted(counts.items()))
    return f"left out: conversations not done {outs or 'none'} (only done conversations are timed)"


def assert_latency(
    run: Run,
    *,
    p95_below: float | None = None,
    baseline: Run | None = None,
    options: AssertOptions | None = None,
) -> Check:
    """Assert agent response time: the run's agent p95 latency is below ``p95_below``
    seconds, or (``baseline``, a run) the run is not slower than the baseline.

    Both read :func:`evalkit.compare.compare_latency`'s cell bootstrap interval at
    ``options.confidence``; each agent answer after the first is one latency (the first
    answer carries the connection set-up and is compared on its own by compare_latency).
    Insufficient evidence when the interval holds the bar (or, against a baseline, when the
    comparison says so).
    """
    __tracebackhide__ = True
    opts = options or AssertOptions()
    if (p95_below is None) == (baseline is None):
        raise TypeError("give one of p95_below (seconds) and baseline (a run)")
    if p95_below is not None:
        if not (isinstance(p95_below, int | float) and p95_below > 0 and math.isfinite(p95_below)):
            raise ValueError(f"p95_below must be a number of seconds > 0, got {p95_below!r}")
        result = compare_latency(
            _bar_side(run, p95_below), run, options=LatencyOptions(confidence=opts.confidence)
        )
        row = _row(result)
        low, high = float(row["difference_low"]), float(row["difference_high"])
        outcome: Outcome = "passed" if high < 0 else "failed" if low > 0 else "insufficient"
        verdict = {"passed": "below", "failed": "above", "insufficient": "undecided"}[outcome]
        claim = f"agent p95 latency is below {p95_below:g} s"
        evidence = (
            f"{verdict} the bar: p95 {float(row['candidate']):.3f} s, minus the bar "
            f"{float(row['difference']):+.3f} s ({round(100 * opts.confidence)}% CI "
            f"{low:+.3f} to {high:+.3f} s), {result.n[1]} conversations, {result.turns[1]} "
            f"timed agent answers in {result.cells[1]} cells"
        )
        needed = (
            "a decision needs more conversations: the interval of p95 minus the bar holds zero"
            if outcome == "insufficient"
            else None
        )
    else:
        assert baseline is not None
        result = compare_latency(baseline, run, options=LatencyOptions(confidence=opts.confidence))
        row = _row(result)
        low, high = float(row["difference_low"]), float(row["difference_high"])
        v = result.verdict
        outcome = (
            "failed"
            if v == Verdict.REGRESSED
            else "passed"
            if v in (Verdict.NO_DIFFERENCE, Verdict.IMPROVED)
            else "insufficient"
        )
        verdict = v.value
        claim = (
            f"agent latency is not slower than the baseline by more than {result.min_effect_s:g} s"
        )
        evidence = result.headline()
        needed = (
            "a decision needs more conversations (or a larger minimum effect)"
            if outcome == "insufficient"
            else None
        )
    return settle(
        Check(
            kind="latency",
            claim=claim,
            outcome=outcome,
            verdict=verdict,
            evidence=evidence,
            difference=float(row["difference"]),
            interval=(low, high),
            n=int(result.n[1]),
            confidence=opts.confidence,
            unit="s",
            details=(_left_out(run), *(f"warning: {w}" for w in result.warnings)),
            needed=needed,
            result=result,
        ),
        opts,
    )
