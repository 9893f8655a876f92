"""Comparison tables as a person reads them: rates and differences with their intervals."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..compare import Comparison

__all__ = ["rule_table"]


def _pct(value: float, low: float, high: float) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{100 * value:.0f}% [{100 * low:.0f}, {100 * high:.0f}]"


def _diff(value: float, low: float, high: float) -> str:
    if not math.isfinite(value):
        return "–"
    return f"{value:+.1f} [{low:+.1f}, {high:+.1f}]"


def _interval(r: Mapping[Any, Any], name: str) -> tuple[float, float, float]:
    return float(r[name]), float(r[f"{name}_low"]), float(r[f"{name}_high"])


def rule_table(comparison: Comparison) -> pd.DataFrame:
    """Per rule: pass rates per side with Wilson intervals, the paired difference (points)
    with its adjusted interval, the direction, and how many were not applicable or errors."""
    rows = [
        {
            "rule": r["rule_id"],
            "title": r["title"],
            "baseline pass rate": _pct(*_interval(r, "pass_rate_baseline")),
            "candidate pass rate": _pct(*_interval(r, "pass_rate_candidate")),
            "difference (points)": _diff(*_interval(r, "difference")),
            "direction": str(r["direction"]).replace("_", " "),
            "n/a or error": f"{int(r['na_baseline'] + r['error_baseline'])} / "
            f"{int(r['na_candidate'] + r['error_candidate'])}",
        }
        for r in comparison.by_rule.to_dict("records")
    ]
    order = {"regressed": 0, "improved": 1, "insufficient evidence": 2, "no difference": 3}
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values("direction", key=lambda s: s.map(order), kind="stable")
