"""The result of a draft-vs-prod comparison: verdict, summary and breakdown tables."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ._verdict import Verdict

__all__ = [
    "Comparison",
    "headline",
    "interval_words",
    "left_out_line",
    "non_inferiority_line",
    "sequential_line",
    "verdict_card",
]


#: Summary columns that are numbers (None in JSON shows as NaN).
_NUMERIC = frozenset(
    {
        "difference",
        "difference_low",
        "difference_high",
        "non_inferiority_bound",
        "equivalence_low",
        "equivalence_high",
        "worst_case_low",
        "best_case_high",
        "min_detectable_effect",
        "se",
        "df",
        "z",
        "futility_z",
        "efficacy_z",
        "conditional_power",
        "alpha_spent",
        "nominal_confidence",
    }
    | {f"score_{s}{e}" for s in ("baseline", "candidate") for e in ("", "_low", "_high")}
)


def _pts(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.1f}"


def interval_words(r: dict[str, Any]) -> str:
    """``95% CI -15.6 to -8.1`` or why there is none."""
    if math.isnan(r["difference_low"]):
        return str(r["method_reason"])
    level = round(100 * r["confidence"])
    return f"{level}% CI {r['difference_low']:+.1f} to {r['difference_high']:+.1f}"


def headline(verdict: Verdict, r: dict[str, Any]) -> str:
    """The printed comparison's first line: verdict, difference, interval, n."""
    if math.isnan(r["difference"]):
        return (
            f"{verdict.value}: no cell was scored on both sides, so there is no difference to show"
        )
    return (
        f"{verdict.value}: difference {r['difference']:+.1f} points ({interval_words(r)}; "
        f"min effect {r['min_effect']:g}), n = {r['cells_paired']} cells paired, "
        f"{r['scored_baseline']} vs {r['scored_candidate']} conversations scored"
    )


def non_inferiority_line(r: dict[str, Any]) -> str:
    """Whether the candidate is not worse by more than the minimum effect, in words."""
    level = round(100 * r["confidence"])
    bound, m = r["non_inferiority_bound"], r["min_effect"]
    if math.isnan(bound):
        return "non-inferior: cannot tell (no interval)"
    if r["non_inferior"]:
        return (
            f"non-inferior: yes, the candidate is not worse than the baseline by more than {m:g} "
            f"points (one-sided {level}% lower bound {bound:+.1f} > {-m:+g})"
        )
    return (
        f"non-inferior: not shown, the candidate may be worse than the baseline by more than "
        f"{m:g} points (one-sided {level}% lower bound {bound:+.1f} <= {-m:+g})"
    )


def sequential_line(r: dict[str, Any]) -> str | None:
    """A sequential look in words (None for a fixed comparison)."""
    if r.get("look") is None:
        return None
    method = str(r.get("sequential_method", "group_sequential")).replace("_", "-")
    stopped = r.get("stopped_for") or ""
    state = f"stopped ({stopped})" if stopped else "going on"
    return (
        f"sequential ({method}): look {r['look']} of {r['looks_planned']}, {state}; the "
        f"interval is computed at {100 * r['nominal_confidence']:.2f}% so that all looks hold "
        f"{round(100 * r['confidence'])}% together (alpha spent {r['alpha_spent']:.4f}; "
        f"|z| {abs(r['z']):.2f} against efficacy {r['efficacy_z']:.2f} and futility "
        f"{r['futility_z']:.2f})"
    )


def left_out_line(r: dict[str, Any], left_out: dict[str, dict[str, int]]) -> str:
    """What each side left out: conversations not done, unscored, judge errors, n/a, unpaired."""

    def pair(key: str) -> str:
        return f"{r[f'{key}_baseline']} / {r[f'{key}_candidate']}"

    def statuses(label: str) -> str:
        counts = left_out.get(label, {})
        return " + ".join(f"{n} {s}" for s, n in sorted(counts.items()) if n) or "0"

    return (
        f"left out (baseline / candidate): not done {statuses('baseline')} / "
        f"{statuses('candidate')}, unscored conversations {pair('unscored')}, judged rules in "
        f"error {pair('error')}, n/a {pair('na')}, unpaired cells {pair('unpaired_cells')}"
    )


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

    ``summary`` has one row (the verdict and its ``reason``, the interval, ``method`` and
    ``method_reason``, ``non_inferior``, counts per side); ``by_rule`` and ``by_persona``
    carry Bonferroni-adjusted paired intervals, one family each; ``by_cell`` has per-cell
    scores and pass^k; ``unpaired`` lists cells graded on one side only; ``left_out`` counts
    conversations left out by status, per side; ``warnings`` are plain sentences about what
    could mislead (errors or n/a that differ between sides, a small design, peeking);
    ``stop`` is None for a fixed comparison and, for a sequential look, whether it decides.
    """

    verdict: Verdict
    summary: pd.DataFrame
    by_rule: pd.DataFrame
    by_persona: pd.DataFrame
    by_cell: pd.DataFrame
    unpaired: pd.DataFrame
    left_out: dict[str, dict[str, int]]
    warnings: tuple[str, ...] = ()
    stop: bool | None = None

    @property
    def _row(self) -> dict[str, Any]:
        return {str(k): _plain(v) for k, v in self.summary.iloc[0].items()}

    @property
    def _shown(self) -> dict[str, Any]:
        """The summary row for display: missing numbers (NaN) as NaN floats, never None."""
        return {k: (math.nan if v is None and k in _NUMERIC else v) for k, v in self._row.items()}

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
            "warnings": list(self.warnings),
            "stop": self.stop,
        }

    def __str__(self) -> str:
        r = self._shown
        lines = [
            headline(self.verdict, r),
            f"  {non_inferiority_line(r)}",
            f"  {left_out_line(r, self.left_out)}",
        ]
        sequential = sequential_line(r)
        if sequential:
            lines.insert(1, f"  {sequential}")
        moved = self.by_rule[self.by_rule["direction"].isin(["improved", "regressed"])]
        for rule in moved.itertuples():
            lines.append(
                f"  {rule.direction}: {rule.rule_id} ({rule.title}) {rule.difference:+.1f} points"
            )
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    def __repr__(self) -> str:
        d = self._shown["difference"]
        shown = "no paired cells" if math.isnan(d) else f"{d:+.1f} points"
        return f"<Comparison {self.verdict.value}: {shown}>"

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


def _side_row(r: dict[str, Any], side: str, left_out: dict[str, int]) -> str:
    outs = [f"{n} {status}" for status, n in sorted(left_out.items()) if n]
    if r[f"unscored_{side}"]:
        outs.append(f"{r[f'unscored_{side}']} with no applicable rule")
    if r[f"unpaired_cells_{side}"]:
        outs.append(f"{r[f'unpaired_cells_{side}']} unpaired cells")
    low, high = r[f"score_{side}_low"], r[f"score_{side}_high"]
    ci = "" if math.isnan(low) else f" [{low:.1f}, {high:.1f}]"
    return (
        f"<tr><td>{side}</td><td>{r[f'scored_{side}']}</td>"
        f"<td>{html.escape(', '.join(outs) or 'none')}</td>"
        f"<td>{r[f'score_{side}']:.1f}{ci}</td><td>{r[f'error_{side}']}</td>"
        f"<td>{r[f'na_{side}']}</td></tr>"
    )


def verdict_card(comparison: Comparison) -> str:
    """The verdict as a person reads it: the answer, how sure, what was left out, what moved."""
    r = comparison._shown
    level = round(100 * r["confidence"])
    colour, _ = _VERDICT_WORDS[comparison.verdict]
    if math.isnan(r["difference"]):
        finding = "No cell was scored on both sides, so there is no difference to show."
    else:
        direction = "higher" if not r["difference"] < 0 else "lower"
        finding = (
            f"The candidate scores <b>{abs(r['difference']):.1f} points {direction}</b> than the "
            f"baseline ({html.escape(interval_words(r))}): {html.escape(str(r['reason']))} "
            f"(minimum effect {r['min_effect']:g} points)."
        )
    moved = comparison.by_rule[comparison.by_rule["direction"].isin(["improved", "regressed"])]
    moved_items = "".join(
        f"<li><b>{html.escape(str(m.direction))}</b>: {html.escape(str(m.rule_id))} "
        f"(<bdi>{html.escape(str(m.title))}</bdi>) {m.difference:+.1f} points "
        f"[{m.difference_low:+.1f}, {m.difference_high:+.1f}]</li>"
        for m in moved.itertuples()
    )
    family = (
        f"Bonferroni-adjusted over the {len(comparison.by_rule)} rules, one family"
        if len(comparison.by_rule)
        else "no rules"
    )
    rows = "".join(
        _side_row(r, side, comparison.left_out.get(side, {})) for side in ("baseline", "candidate")
    )
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in comparison.warnings)
    mde = r["min_detectable_effect"]
    mde_text = (
        ""
        if math.isnan(mde)
        else f" With this grid, differences smaller than about {mde:.1f} points would usually "
        f"go unnoticed ({round(100 * r['mde_power'])}% power)."
    )
    return (
        '<div class="evalkit-verdict" style="border:1px solid #d0d7de;border-radius:8px;'
        'padding:14px 18px;margin:8px 0 16px">'
        f'<div style="font-size:1.35rem;font-weight:700">Verdict: <span style="color:#fff;'
        f'background:{colour};border-radius:6px;padding:2px 10px">'
        f"{html.escape(comparison.verdict.value.replace('_', ' '))}</span></div>"
        f'<p style="font-size:1.05rem;margin:.6rem 0">{finding}</p>'
        f'<p class="evalkit-non-inferior">{html.escape(non_inferiority_line(r).capitalize())}.</p>'
        + (
            f'<p class="evalkit-sequential">{html.escape(seq.capitalize())}.</p>'
            if (seq := sequential_line(r))
            else ""
        )
        + (
            '<div class="evalkit-warnings" style="background:#fff8c5;border:1px solid #d4a72c;'
            f'border-radius:6px;padding:6px 12px;margin:8px 0"><b>Warnings</b><ul>{warnings}'
            "</ul></div>"
            if warnings
            else ""
        )
        + f"<p>n = {r['cells_paired']} cells paired ({r['cells_unpaired']} unpaired).{mde_text}</p>"
        "<table><thead><tr><th>side</th><th>conversations scored</th><th>left out</th>"
        f"<th>mean score [{level}% CI]</th><th>judged rules in error</th><th>rules n/a</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>"
        + (
            f"<p><b>Rules that moved</b> ({html.escape(family)}):</p><ul>{moved_items}</ul>"
            if moved_items
            else "<p>No rule moved beyond its interval.</p>"
        )
        + f'<p style="color:#57606a;font-size:.85rem">Method: {html.escape(str(r["method_reason"]))}. '
        "Scores leave out rules that were n/a or whose judge call failed; they are counted above, "
        "never scored as failures.</p></div>"
    )
