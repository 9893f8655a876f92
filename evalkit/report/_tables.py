"""Comparison tables as a person reads them: rates and differences with their intervals, and
words, never blanks, where a rule could not be compared."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..compare import Comparison

__all__ = ["NOT_COMPARED", "rule_table", "unscored_reason"]

#: The direction a rule table shows for a rule no conversation could be compared on.
NOT_COMPARED = "not compared"

_SIDES = ("baseline", "candidate")


def _pct(value: float, low: float, high: float) -> str:
    return f"{100 * value:.0f}% [{100 * low:.0f}, {100 * high:.0f}]"


def _diff(value: float, low: float, high: float) -> str:
    return f"{value:+.1f} [{low:+.1f}, {high:+.1f}]"


def _interval(r: Mapping[Any, Any], name: str) -> tuple[float, float, float]:
    return float(r[name]), float(r[f"{name}_low"]), float(r[f"{name}_high"])


def _count(r: Mapping[Any, Any], name: str) -> int:
    value = r.get(name, 0)
    return int(value) if value is not None and not pd.isna(value) else 0


def _left_out(r: Mapping[Any, Any], side: str) -> str:
    """``"54 n/a"``, ``"30 n/a, 24 judge errors"``, or ``"no grades"``."""
    na, error = _count(r, f"na_{side}"), _count(r, f"error_{side}")
    parts = [f"{na} n/a"] if na else []
    parts += [f"{error} judge error{'s' if error != 1 else ''}"] if error else []
    return ", ".join(parts) or "no grades"


def _not_applicable(r: Mapping[Any, Any], side: str) -> bool:
    return _count(r, f"applicable_{side}") == 0


def unscored_reason(r: Mapping[Any, Any]) -> str | None:
    """Why a rule of ``comparison.by_rule`` has no difference, in words; None when it has one.

    "applies to no conversation: n/a in all 54 baseline and 54 candidate conversations",
    "applies to no conversation: baseline 30 n/a, 24 judge errors; candidate 54 n/a",
    "applies to no baseline conversation (54 n/a)", or "no cell has grades on both sides".
    """
    if math.isfinite(float(r["difference"])):
        return None
    empty = [side for side in _SIDES if _not_applicable(r, side)]
    if len(empty) == 2:
        if not any(_count(r, f"error_{side}") for side in _SIDES):
            return (
                f"applies to no conversation: n/a in all {_count(r, 'na_baseline')} baseline "
                f"and {_count(r, 'na_candidate')} candidate conversations"
            )
        return (
            "applies to no conversation: "
            f"baseline {_left_out(r, 'baseline')}; candidate {_left_out(r, 'candidate')}"
        )
    if empty:
        (side,) = empty
        return f"applies to no {side} conversation ({_left_out(r, side)})"
    return "no cell has grades on both sides"


def _rate(r: Mapping[Any, Any], side: str) -> str:
    name = f"pass_rate_{side}"
    if _not_applicable(r, side) or not math.isfinite(float(r[name])):
        return f"not applicable ({_left_out(r, side)})"
    return _pct(*_interval(r, name))


def rule_table(comparison: Comparison) -> pd.DataFrame:
    """Per rule: pass rates per side with Wilson intervals, the paired difference (points)
    with its adjusted interval, the direction, and how many were not applicable or errors.

    A rule that could not be compared says why in its difference cell (``unscored_reason``)
    and shows ``"not compared"`` as its direction, listed last.
    """
    rows = []
    for r in comparison.by_rule.to_dict("records"):
        reason = unscored_reason(r)
        rows.append(
            {
                "rule": r["rule_id"],
                "title": r["title"],
                "baseline pass rate": _rate(r, "baseline"),
                "candidate pass rate": _rate(r, "candidate"),
                "difference (points)": reason or _diff(*_interval(r, "difference")),
                "direction": NOT_COMPARED if reason else str(r["direction"]).replace("_", " "),
                "n/a or error": f"{_count(r, 'na_baseline') + _count(r, 'error_baseline')} / "
                f"{_count(r, 'na_candidate') + _count(r, 'error_candidate')}",
            }
        )
    order = {
        "regressed": 0,
        "improved": 1,
        "insufficient evidence": 2,
        "no difference": 3,
        NOT_COMPARED: 4,
    }
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values("direction", key=lambda s: s.map(order), kind="stable")
