"""The result of a draft-vs-prod comparison: verdict, summary and breakdown tables."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ._verdict import Verdict

__all__ = ["Comparison", "verdict_card"]


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

    @property
    def _shown(self) -> dict[str, Any]:
        """The summary row for display: missing numbers (NaN) as NaN floats, never None."""
        return {
            k: (math.nan if v is None and k not in ("verdict", "method") else v)
            for k, v in self._row.items()
        }

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
        r = self._shown
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
        return f"<Comparison {self.verdict.value}: {self._shown['difference']:+.1f} points>"

    def _repr_html_(self) -> str:
        return verdict_card(self)


#: verdict -> (badge colour, what it means)
_VERDICT_WORDS: dict[Verdict, tuple[str, str]] = {
    Verdict.REGRESSED: ("#cf222e", "the whole interval is below zero"),
    Verdict.IMPROVED: ("#1a7f37", "the whole interval is above zero"),
    Verdict.NO_DIFFERENCE: ("#57606a", "the whole interval lies within the minimum effect"),
    Verdict.INSUFFICIENT_EVIDENCE: (
        "#9a6700",
        "the interval is too wide to tell: it holds both zero and differences beyond the "
        "minimum effect",
    ),
}


def _side_row(r: dict[str, Any], side: str, level: int, left_out: dict[str, int]) -> str:
    outs = ", ".join(f"{n} {status}" for status, n in sorted(left_out.items()) if n) or "none"
    return (
        f"<tr><td>{side}</td><td>{r[f'conversations_{side}']}</td><td>{html.escape(outs)}</td>"
        f"<td>{r[f'score_{side}']:.1f} [{r[f'score_{side}_low']:.1f}, "
        f"{r[f'score_{side}_high']:.1f}]</td><td>{r[f'error_{side}']}</td>"
        f"<td>{r[f'na_{side}']}</td></tr>"
    )


def verdict_card(comparison: Comparison) -> str:
    """The verdict as a person reads it: the answer, how sure, what was left out, what moved."""
    r = comparison._shown
    level = round(100 * r["confidence"])
    colour, meaning = _VERDICT_WORDS[comparison.verdict]
    direction = "higher" if not r["difference"] < 0 else "lower"
    moved = comparison.by_rule[comparison.by_rule["direction"].isin(["improved", "regressed"])]
    moved_items = "".join(
        f"<li><b>{html.escape(str(m.direction))}</b>: {html.escape(str(m.rule_id))} "
        f"(<bdi>{html.escape(str(m.title))}</bdi>) {m.difference:+.1f} points "
        f"[{m.difference_low:+.1f}, {m.difference_high:+.1f}]</li>"
        for m in moved.itertuples()
    )
    adjusted = str(comparison.by_rule["adjustment"].iloc[0]) if len(comparison.by_rule) else "none"
    rows = "".join(
        _side_row(r, side, level, comparison.left_out.get(side, {}))
        for side in ("baseline", "candidate")
    )
    return (
        '<div class="evalkit-verdict" style="border:1px solid #d0d7de;border-radius:8px;'
        'padding:14px 18px;margin:8px 0 16px">'
        f'<div style="font-size:1.35rem;font-weight:700">Verdict: <span style="color:#fff;'
        f'background:{colour};border-radius:6px;padding:2px 10px">'
        f"{html.escape(comparison.verdict.value.replace('_', ' '))}</span></div>"
        f'<p style="font-size:1.05rem;margin:.6rem 0">The candidate scores '
        f"<b>{abs(r['difference']):.1f} points {direction}</b> than the baseline "
        f"({level}% interval {r['difference_low']:+.1f} to {r['difference_high']:+.1f}); "
        f"{html.escape(meaning)} (minimum effect {r['min_effect']:g} points).</p>"
        f"<p>n = {r['cells_paired']} cells paired ({r['cells_unpaired']} unpaired). With this "
        f"grid, differences smaller than about {r['min_detectable_effect']:.1f} points would "
        f"usually go unnoticed ({round(100 * r['mde_power'])}% power).</p>"
        "<table><thead><tr><th>side</th><th>conversations scored</th><th>left out</th>"
        f"<th>mean score [{level}% CI]</th><th>judged rules in error</th><th>rules n/a</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>"
        + (
            f"<p><b>Rules that moved</b> ({html.escape(adjusted)}-adjusted intervals):</p>"
            f"<ul>{moved_items}</ul>"
            if moved_items
            else "<p>No rule moved beyond its interval.</p>"
        )
        + f'<p style="color:#57606a;font-size:.85rem">Method: {html.escape(str(r["method"]))}. '
        "Scores leave out rules that were n/a or whose judge call failed; they are counted above, "
        "never scored as failures.</p></div>"
    )
