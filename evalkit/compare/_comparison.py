"""The result of a draft-vs-prod comparison: verdict, summary and breakdown tables."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._results import Result, json_records, json_value
from .._util import markdown_table, markdown_text
from ._verdict import Verdict

__all__ = [
    "VERDICT_MEANING",
    "Comparison",
    "headline",
    "interval_words",
    "left_out_line",
    "non_inferiority_line",
    "rules_left_out",
    "sequential_line",
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


def level_words(confidence: float) -> str:
    """A confidence as a percentage without false roundness: 0.95 -> ``95``, 0.9975 ->
    ``99.75`` (a family-adjusted level never reads as 100)."""
    return f"{100 * confidence:.3f}".rstrip("0").rstrip(".")


def interval_words(r: dict[str, Any]) -> str:
    """``95% CI -15.6 to -8.1`` or why there is none."""
    if math.isnan(r["difference_low"]):
        return str(r["method_reason"])
    level = level_words(r["confidence"])
    return f"{level}% CI {r['difference_low']:+.1f} to {r['difference_high']:+.1f}"


def rules_left_out(r: dict[str, Any]) -> bool:
    """Whether a side's scores leave out whole rules (the verdict is refused then)."""
    return bool(r.get("rules_left_out_baseline") or r.get("rules_left_out_candidate"))


def headline(verdict: Verdict, r: dict[str, Any]) -> str:
    """The printed comparison's first line: verdict, difference, interval, n (and, when the
    scores leave out whole rules, why there is no verdict)."""
    if math.isnan(r["difference"]):
        return (
            f"{verdict.value}: no cell was scored on both sides, so there is no difference to show"
        )
    line = (
        f"{verdict.value}: difference {r['difference']:+.1f} points ({interval_words(r)}; "
        f"min effect {r['min_effect']:g}), n = {r['cells_paired']} cells paired, "
        f"{r['scored_baseline']} vs {r['scored_candidate']} conversations scored"
    )
    return f"{line}; {r['reason']}" if rules_left_out(r) else line


def non_inferiority_line(r: dict[str, Any]) -> str:
    """Whether the candidate is not worse by more than the minimum effect, in words."""
    level = level_words(r["confidence"])
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
        f"error {pair('error')}, rule grades n/a (the rule did not apply) {pair('na')}, unpaired cells {pair('unpaired_cells')}"
    )


#: The per-rule columns :meth:`Comparison.to_markdown` shows.
_MARKDOWN_RULE_COLUMNS = (
    "rule_id",
    "title",
    "pass_rate_baseline",
    "pass_rate_candidate",
    "difference",
    "difference_low",
    "difference_high",
    "direction",
)


#: verdict -> what it means (the card's badge takes its colour from the verdict's CSS class)
VERDICT_MEANING: dict[Verdict, str] = {
    Verdict.REGRESSED: "the whole interval is below zero",
    Verdict.IMPROVED: "the whole interval is above zero",
    Verdict.NO_DIFFERENCE: "the whole interval lies within the minimum effect",
    Verdict.INSUFFICIENT_EVIDENCE: (
        "the interval is too wide to tell: it holds both zero and differences beyond the "
        "minimum effect"
    ),
}


@dataclass(frozen=True, repr=False)
class Comparison(Result):
    """Candidate vs baseline, from grades. Differences are candidate minus baseline, in points.

    ``summary`` has one row (the verdict and its ``reason``, the interval, ``method`` and
    ``method_reason``, ``non_inferior``, counts per side); the typed attributes read it
    (``difference``, ``interval``, ``n``, ``confidence``, ``min_effect``, ``non_inferior``).
    ``by_rule`` and ``by_persona`` carry Bonferroni-adjusted paired intervals, one family each;
    ``by_cell`` has per-cell scores and pass^k; ``unpaired`` lists cells graded on one side
    only; ``left_out`` counts conversations left out by status, per side; ``warnings`` are
    plain sentences about what could mislead (errors or n/a that differ between sides, a small
    design, peeking); ``stop`` is None for a fixed comparison and, for a sequential look,
    whether it decides.
    """

    template = "comparison.html"

    verdict: Verdict
    _summary: pd.DataFrame = field(repr=False)
    by_rule: pd.DataFrame
    by_persona: pd.DataFrame
    by_cell: pd.DataFrame
    unpaired: pd.DataFrame
    left_out: dict[str, dict[str, int]]
    warnings: tuple[str, ...] = ()
    stop: bool | None = None

    @property
    def summary(self) -> pd.DataFrame:
        """One row: verdict, reason, difference and interval, method, counts per side."""
        return self._summary

    @property
    def _row(self) -> dict[str, Any]:
        return {str(k): json_value(v) for k, v in self._summary.iloc[0].items()}

    @property
    def _shown(self) -> dict[str, Any]:
        """The summary row for display: missing numbers (NaN) as NaN floats, never None."""
        return {k: (math.nan if v is None and k in _NUMERIC else v) for k, v in self._row.items()}

    @property
    def difference(self) -> float:
        """Mean score difference, candidate minus baseline, in points (NaN: nothing paired)."""
        return float(self._shown["difference"])

    @property
    def interval(self) -> tuple[float, float]:
        """The ``confidence`` interval of :attr:`difference` (low, high); NaN when none."""
        r = self._shown
        return float(r["difference_low"]), float(r["difference_high"])

    @property
    def n(self) -> int:
        """Cells scored on both sides (the paired sample size)."""
        return int(self._row["cells_paired"])

    @property
    def confidence(self) -> float:
        return float(self._row["confidence"])

    @property
    def min_effect(self) -> float:
        return float(self._row["min_effect"])

    @property
    def non_inferior(self) -> bool:
        """The candidate is shown not worse than the baseline by more than ``min_effect``."""
        return bool(self._row["non_inferior"])

    @property
    def reason(self) -> str:
        """Why the verdict, in words."""
        return str(self._row["reason"])

    def headline(self) -> str:
        """Verdict, difference, interval and n in one line."""
        return headline(self.verdict, self._shown)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-serialisable (what a CI job writes as ``summary.json``)."""
        return {
            "verdict": self.verdict.value,
            "summary": self._row,
            "by_rule": json_records(self.by_rule),
            "by_persona": json_records(self.by_persona),
            "by_cell": json_records(self.by_cell),
            "unpaired": json_records(self.unpaired),
            "left_out": self.left_out,
            "warnings": list(self.warnings),
            "stop": self.stop,
        }

    def __str__(self) -> str:
        r = self._shown
        lines = [
            self.headline(),
            f"  {non_inferiority_line(r)}",
            f"  {left_out_line(r, self.left_out)}",
        ]
        sequential = sequential_line(r)
        if sequential:
            lines.insert(1, f"  {sequential}")
        for rule in self._moved().itertuples():
            lines.append(
                f"  {rule.direction}: {rule.rule_id} ({rule.title}) {rule.difference:+.1f} points"
            )
        lines.extend(f"  warning: {w}" for w in self.warnings)
        return "\n".join(lines)

    def _moved(self) -> pd.DataFrame:
        return self.by_rule[self.by_rule["direction"].isin(["improved", "regressed"])]

    def _markdown_sections(self) -> list[str]:
        """The printed lines as a list, then the per-rule table (the one-row summary is too
        wide for a table)."""
        r = self._shown
        lines = [non_inferiority_line(r), left_out_line(r, self.left_out)]
        sequential = sequential_line(r)
        if sequential:
            lines.insert(0, sequential)
        lines.extend(f"warning: {w}" for w in self.warnings)
        sections = ["\n".join(f"- {markdown_text(line)}" for line in lines)]
        table = markdown_table(self.by_rule, _MARKDOWN_RULE_COLUMNS)
        if table:
            sections.append(table)
        return sections

    def html_context(self) -> dict[str, Any]:
        """The verdict card's words: the finding, the sides, the rules that moved."""
        r = self._shown
        sides = []
        for side in ("baseline", "candidate"):
            outs = [f"{n} {s}" for s, n in sorted(self.left_out.get(side, {}).items()) if n]
            if r[f"unscored_{side}"]:
                outs.append(f"{r[f'unscored_{side}']} with no applicable rule")
            if r[f"unpaired_cells_{side}"]:
                outs.append(f"{r[f'unpaired_cells_{side}']} unpaired cells")
            low, high = r[f"score_{side}_low"], r[f"score_{side}_high"]
            ci = "" if math.isnan(low) else f" [{low:.1f}, {high:.1f}]"
            sides.append(
                {
                    "side": side,
                    "scored": r[f"scored_{side}"],
                    "left_out": ", ".join(outs) or "none",
                    "score": f"{r[f'score_{side}']:.1f}{ci}",
                    "error": r[f"error_{side}"],
                    "na": r[f"na_{side}"],
                }
            )
        moved = [
            {
                "direction": m.direction,
                "rule_id": m.rule_id,
                "title": m.title,
                "shown": f"{m.difference:+.1f} points [{m.difference_low:+.1f}, "
                f"{m.difference_high:+.1f}]",
            }
            for m in self._moved().itertuples()
        ]
        difference = r["difference"]
        mde = r["min_detectable_effect"]
        seq = sequential_line(r)
        return {
            "r": r,
            "level": round(100 * r["confidence"]),
            "verdict_text": self.verdict.value.replace("_", " "),
            "meaning": r["reason"] if rules_left_out(r) else VERDICT_MEANING[self.verdict],
            "paired": not math.isnan(difference),
            "amount": f"{abs(difference):.1f}" if not math.isnan(difference) else "",
            "direction": "lower" if difference < 0 else "higher",
            "interval_words": interval_words(r),
            "non_inferiority": non_inferiority_line(r).capitalize(),
            "sequential": seq.capitalize() if seq else None,
            "sides": sides,
            "moved": moved,
            "family": (
                f"Bonferroni-adjusted over the {len(self.by_rule)} rules, one family"
                if len(self.by_rule)
                else "no rules"
            ),
            "mde": None if math.isnan(mde) else f"{mde:.1f}",
            "mde_power": round(100 * r["mde_power"]) if not math.isnan(mde) else None,
        }
