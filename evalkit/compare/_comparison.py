"""The result of a draft-vs-prod comparison: verdict, summary and breakdown tables."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ._verdict import Verdict

__all__ = ["Comparison"]


def _plain(value: Any) -> Any:
    """``value`` as JSON-ready Python: numpy scalars unwrapped, NaN/inf and NA as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Verdict):
        return value.value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


@dataclass(frozen=True)
class Comparison:
    """Candidate vs baseline, from grades. Differences are candidate minus baseline, in points.

    ``summary`` has one row; ``by_rule`` and ``by_persona`` carry Bonferroni-adjusted paired
    intervals; ``by_cell`` has per-cell scores and pass^k; ``unpaired`` lists cells graded on
    one side only; ``left_out`` counts conversations left out by status, per side.
    """

    verdict: Verdict
    summary: pd.DataFrame
    by_rule: pd.DataFrame
    by_persona: pd.DataFrame
    by_cell: pd.DataFrame
    unpaired: pd.DataFrame
    left_out: dict[str, dict[str, int]]

    @property
    def _row(self) -> dict[str, Any]:
        return {str(k): _plain(v) for k, v in self.summary.iloc[0].items()}

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-serialisable (what a CI job writes as ``summary.json``)."""
        return {
            "verdict": self.verdict.value,
            "summary": self._row,
            "by_rule": _records(self.by_rule),
            "by_persona": _records(self.by_persona),
            "by_cell": _records(self.by_cell),
            "unpaired": _records(self.unpaired),
            "left_out": self.left_out,
        }

    def __str__(self) -> str:
        r = self._row
        level = round(100 * r["confidence"])
        lines = [
            f"{self.verdict.value}: difference {r['difference']:+.1f} points "
            f"({level}% CI {r['difference_low']:+.1f} to {r['difference_high']:+.1f}; "
            f"min effect {r['min_effect']:g}), n = {r['cells_paired']} cells paired, "
            f"{r['conversations_baseline']} vs {r['conversations_candidate']} conversations"
        ]
        moved = self.by_rule[self.by_rule["direction"].isin(["improved", "regressed"])]
        for rule in moved.itertuples():
            lines.append(
                f"  {rule.direction}: {rule.rule_id} ({rule.title}) {rule.difference:+.1f} points"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Comparison {self.verdict.value}: {self._row['difference']:+.1f} points>"

    def _repr_html_(self) -> str:
        head = html.escape(str(self).splitlines()[0])
        return (
            f"<div><p><b>{head}</b></p>{self.summary.to_html(index=False)}"
            f"<p>By rule (Bonferroni-adjusted intervals)</p>{self.by_rule.to_html(index=False)}</div>"
        )
