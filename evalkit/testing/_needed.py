"""The conversations a decision would need, said when a check has insufficient evidence.

An extrapolation from the check's own interval, at the estimate seen: an interval's half-width
shrinks as one over the square root of the sample, so to move a bound past what decides
(``-margin`` or zero for a comparison, the bar for a pass rate) at the same estimate the
sample must grow by ``(half-width / distance to the decision)^2``. A pass rate's is found on
its Wilson interval itself (:func:`evalkit.stats.wilson_interval`).
"""

from __future__ import annotations

import math
from typing import Literal

from ..compare import Comparison
from ..stats import wilson_interval

__all__ = ["comparison_needs", "pass_rate_needs"]

_MAX_N = 1_000_000
#: Beyond this factor the sample a decision needs is said to be out of reach.
_MAX_FACTOR = 10_000.0


def comparison_needs(comparison: Comparison, kind: Literal["not_worse", "improved"]) -> str:
    """How many conversations a side would decide ``comparison`` for a ``kind`` check."""
    low, high = comparison.interval
    d, m = comparison.difference, comparison.min_effect
    if math.isnan(low) or math.isnan(d):
        return "a decision needs cells scored on both sides with repeats (there is no interval)"
    half = (high - low) / 2.0
    # what decides: the bound crossing -margin or 0 (not worse), 0 or +-margin (improved)
    gaps = [d + m, -d] if kind == "not_worse" else [d, m - abs(d), -d]
    reachable = [g for g in gaps if g > 0]
    if half <= 0 or not reachable:
        return "a decision needs a different estimate, not a larger sample"
    factor = (half / max(reachable)) ** 2
    row = comparison.summary.iloc[0]
    now = int(max(row["scored_baseline"], row["scored_candidate"]))
    if factor > _MAX_FACTOR:
        return (
            f"at the difference seen ({d:+.1f} points) no practical sample decides it: the "
            "interval would have to shrink more than a hundredfold"
        )
    need = max(now + 1, math.ceil(now * factor))
    return (
        f"at the difference seen ({d:+.1f} points), an interval narrow enough to decide needs "
        f"about {need} conversations a side (now {now}; the interval's half-width of "
        f"{half:.1f} points shrinks as one over the square root of the sample)"
    )


def pass_rate_needs(rate: float, at_least: float, n: int, level: float) -> str:
    """How many graded conversations a Wilson interval at ``rate`` needs to leave out
    ``at_least``."""
    if math.isnan(rate):
        return "a decision needs conversations to which the rule applies (none did)"
    if rate == at_least:
        return f"the pass rate is at the bar of {at_least:g}: no sample size decides it"

    def decides(size: int) -> bool:
        low, high = wilson_interval(rate * size, size, level)
        return bool(low >= at_least or high < at_least)

    size = max(n, 1)
    while not decides(size):
        size *= 2
        if size > _MAX_N:
            return f"the pass rate {rate:.3g} is too close to the bar {at_least:g} to decide"
    low, high = size // 2, size
    while low + 1 < high:
        mid = (low + high) // 2
        low, high = (low, mid) if decides(mid) else (mid, high)
    return (
        f"at the pass rate seen ({rate:.3g}), a decision needs about {high} graded "
        f"conversations for this rule (now {n})"
    )
