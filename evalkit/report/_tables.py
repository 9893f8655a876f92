"""Comparison tables as a person reads them: rates and differences with their intervals."""

from __future__ import annotations

import math
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


class _Row:
    """Attribute access to one record (numbers as floats)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self._record = record

    def __getattr__(self, name: str) -> Any:
        value = self._record[name]
        return float(value) if isinstance(value, int | float) and name != "rule_id" else value


def rule_table(comparison: Comparison) -> pd.DataFrame:
    """Per rule: pass rates per side with Wilson intervals, the paired difference (points)
    with its adjusted interval, the direction, and how many were not applicable or errors."""
    rows = []
    records = [{str(k): v for k, v in rec.items()} for rec in comparison.by_rule.to_dict("records")]
    for rec in records:
        r = _Row(rec)
        rows.append(
            {
                "rule": r.rule_id,
                "title": r.title,
                "baseline pass rate": _pct(
                    r.pass_rate_baseline, r.pass_rate_baseline_low, r.pass_rate_baseline_high
                ),
                "candidate pass rate": _pct(
                    r.pass_rate_candidate, r.pass_rate_candidate_low, r.pass_rate_candidate_high
                ),
                "difference (points)": _diff(r.difference, r.difference_low, r.difference_high),
                "direction": str(r.direction).replace("_", " "),
                "n/a or error": f"{int(r.na_baseline + r.error_baseline)} / "
                f"{int(r.na_candidate + r.error_candidate)}",
            }
        )
    order = {"regressed": 0, "improved": 1, "insufficient evidence": 2, "no difference": 3}
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values("direction", key=lambda s: s.map(order), kind="stable")
