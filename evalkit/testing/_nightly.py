"""``assert_no_regression``: the newest night of a history series under the nightly alarm rule.

The rule is the one ``evalkit history --fail-on-regression``, the trend notebook and the viewer
apply (:mod:`evalkit.flows` history; a confirmation rule across nights): a night is
``regressed`` when one night drops far beyond the noise or a suspect night follows a flagged
one. So the check fails on a confirmed regression only; a first suspect night is insufficient
evidence (the next night confirms or clears it), as is a series with nothing to compare yet.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from scipy.special import ndtri

from ..flows import NightlyTrend, latest_regression
from ._check import Check, Outcome, settle
from ._options import AssertOptions

__all__ = ["assert_no_regression"]


def _series(history: Any) -> pd.DataFrame:
    frame = history.by_run if isinstance(history, NightlyTrend) else history
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            "history_series must be a history() frame or a NightlyTrend, not "
            f"{type(history).__name__}"
        )
    if frame.empty:
        raise ValueError("history_series has no graded run: nothing to check")
    if "rule_id" in frame.columns:
        raise ValueError("history_series: give history() by run, not by='rule'")
    series = list(dict.fromkeys(frame["series"]))
    if len(series) > 1:
        raise ValueError(
            f"history_series holds {len(series)} series ({', '.join(map(str, series))}): "
            "give one (history(store, assistant_id=..., rubric=...), options with a target, or "
            "frame[frame.series == ...])"
        )
    return frame.reset_index(drop=True)


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def _statistic(
    newest: dict[str, Any], confidence: float
) -> tuple[float, tuple[float, float], tuple[str, ...]]:
    """The nightly rule's statistic for the newest night (its difference against the pooled
    reference, with ``confidence``'s two-sided interval from its standard error) and the line
    that says it; without one, the difference against the last-known-good night, no interval."""
    difference, se = _num(newest.get("alarm_difference")), _num(newest.get("alarm_se"))
    if math.isnan(difference) or math.isnan(se):
        return _num(newest.get("difference_vs_last_good")), (math.nan, math.nan), ()
    half = float(ndtri(0.5 + confidence / 2)) * se
    low, high = difference - half, difference + half
    line = (
        f"the nightly rule: this night {difference:+.1f} points against its reference "
        f"({round(100 * confidence, 4):g}% CI {low:+.1f} to {high:+.1f}; se {se:.2f}, z "
        f"{_num(newest.get('alarm_z')):+.2f}, {newest.get('alarm_variance') or 'within night'}"
        f"): {newest.get('alarm_why') or 'no alarm'}"
    )
    return difference, (low, high), (line,)


def assert_no_regression(history_series: Any, *, options: AssertOptions | None = None) -> Check:
    """Assert that the newest night of ``history_series`` (:func:`evalkit.history`'s frame of
    one series, or a ``NightlyTrend`` of one) is not a confirmed regression under the nightly
    alarm rule.

    Fails on ``alarm == "regressed"``; insufficient evidence on a first ``suspect`` night or
    when the newest night has no last-known-good night to be compared with; passes otherwise.
    """
    __tracebackhide__ = True
    opts = options or AssertOptions()
    frame = _series(history_series)
    newest = dict(frame.iloc[-1])
    alarm = newest.get("alarm")
    compared = isinstance(newest.get("last_good_run"), str)
    outcome: Outcome
    needed = None
    if latest_regression(frame) is not None:
        outcome = "failed"
    elif alarm == "suspect":
        outcome, needed = "insufficient", "one suspect night: the next night confirms or clears it"
    elif not compared:
        outcome = "insufficient"
        needed = "no last-known-good night to compare with yet: " + str(
            newest.get("note") or "the series needs a complete earlier night"
        )
    else:
        outcome = "passed"
    difference, interval, statistic = _statistic(newest, opts.confidence)
    low, high = _num(newest.get("score_low")), _num(newest.get("score_high"))
    evidence = (
        f"night {newest['run_id']} ({newest.get('started_at')}): score {_num(newest['score']):.1f} "
        f"[{low:.1f}, {high:.1f}], {_num(newest.get('difference_vs_last_good')):+.1f} points "
        "against the last-known-good "
        f"{newest.get('last_good_run')} ({newest.get('verdict_vs_last_good')}); alarm "
        f"{alarm or 'none'}"
        if compared
        else f"night {newest['run_id']}: score {_num(newest['score']):.1f} [{low:.1f}, {high:.1f}]"
    )
    return settle(
        Check(
            kind="no_regression",
            claim="the newest night is not a confirmed regression (the nightly alarm rule)",
            outcome=outcome,
            verdict=str(alarm or newest.get("verdict_vs_last_good") or "none"),
            evidence=evidence,
            difference=difference,
            interval=interval,
            n=len(frame),
            confidence=opts.confidence,
            unit="points",
            details=(*statistic, f"series {newest['series']}: {len(frame)} nights"),
            needed=needed,
        ),
        opts,
    )
