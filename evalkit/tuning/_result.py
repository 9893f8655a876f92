"""TuneResult: the leaderboard of a sweep, its winner, and what promoting it would change."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._results import Result
from ..targets import Variant, config_diff, merge_patch, redact_config
from ._gain import ReportedGain

if TYPE_CHECKING:
    from ..api import AsyncClient, Client
    from ._promote import Promotion

__all__ = ["TuneResult"]

_SHOWN = (
    "variant",
    "conversations",
    "score",
    "difference (all cells)",
    "held-out difference",
    "gain",
    "verdict",
    "agent latency p50 / p95",
    "cost",
    "dropped_at",
    "confirmed",
    "note",
)


def latency_words(row: Mapping[Any, Any]) -> str:
    """``0.82 / 1.90 s (regressed)``: an arm's agent latency beside its score."""
    p50, p95 = row.get("latency_p50"), row.get("latency_p95")
    if p50 is None or pd.isna(p50):
        return "-"
    verdict = row.get("latency_verdict") or ""
    slower = {"regressed": "slower", "improved": "faster"}.get(str(verdict), "")
    return f"{p50:.3g} / {p95:.3g} s{f' ({slower})' if slower else ''}"


def cost_words(row: Mapping[Any, Any]) -> str:
    cost = row.get("cost")
    return "-" if cost is None or pd.isna(cost) else f"{cost:,.2f}"


#: The winner's named numbers a result's ``to_dict()`` carries (None without a winner).
WINNER_FIELDS = (
    "holdout_difference",
    "holdout_low",
    "holdout_high",
    "adjusted_difference",
    "adjusted_low",
    "adjusted_high",
    "fresh_difference",
    "fresh_low",
    "fresh_high",
    "fresh_conversations",
)


def winner_fields(gain: ReportedGain, row: Mapping[str, Any] | None) -> dict[str, Any]:
    """The reported gain (``gain_method``, ``difference``, ``interval``) and the winner's
    held-out, adjusted and fresh numbers, JSON-ready."""
    measured = gain.measured
    return {
        "gain_method": gain.method,
        "difference": gain.estimate if measured else None,
        "interval": [gain.low, gain.high] if measured else None,
        **{k: _json_value(row.get(k)) if row is not None else None for k in WINNER_FIELDS},
    }


def _json_value(value: Any) -> Any:
    if value is None or (not isinstance(value, list | dict | str) and pd.isna(value)):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def _interval(row: Mapping[Any, Any], key: str) -> str:
    stem = key.removesuffix("_difference")
    est, low, high = row.get(key), row.get(f"{stem}_low"), row.get(f"{stem}_high")
    if est is None or (isinstance(est, float) and math.isnan(est)):
        return "n/a"
    sign = "+" if key.endswith("difference") else ""
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return f"{est:{sign}.1f}"
    return f"{est:{sign}.1f} [{low:{sign}.1f}, {high:{sign}.1f}]"


@dataclass(frozen=True, repr=False)
class TuneResult(Result):
    """A sweep's outcome (DESIGN.md "Statistics": compare_variants / tune).

    ``leaderboard`` (also ``summary``): one row per arm, the control first, the arms by
    difference: ``variant``, ``role``, ``conversations``, ``score`` with
    ``score_low``/``score_high``, ``difference`` against the control over every cell (the
    selection cells included) with its interval adjusted for the number of arms (what
    ``regressed`` and ``no_difference`` read; not a winner's gain), ``verdict``,
    ``dropped_at`` (the wave after which adaptive allocation stopped the arm), ``selected``
    (best on the selection cells), ``confirmed`` (its win held on the held-out cells),
    ``p_adjusted`` (Holm over the arms, all cells, one-sided), ``holdout_difference`` with
    ``holdout_low``/``holdout_high`` (the held-out cells alone: for the confirmed arm, read
    after its confirmation and so biased upward), the winner's gain as
    ``adjusted_difference``/``adjusted_low``/``adjusted_high`` (held-out, adjusted for the
    selection and the confirmation) and ``fresh_difference``/``fresh_low``/``fresh_high``
    with ``fresh_conversations`` (fresh repeats, when the sweep ran them), a ``note`` ("best
    by chance is likely", ...) and ``pass_rate:<rule>`` columns. ``details``: the method,
    levels, selection and combination p-values, ``gain_method`` (read the common ones as
    attributes: ``winner``, ``selected``, ``control``, ``method``, ``n``). ``waves``: per wave
    and arm, conversations and whether the arm went on (sweeps run by :func:`evalkit.tune`).
    """

    template = "tune.html"

    leaderboard: pd.DataFrame
    details: Mapping[str, Any]
    waves: pd.DataFrame = field(default_factory=pd.DataFrame)
    variants: Mapping[str, Variant] = field(default_factory=dict)
    control_config: Mapping[str, Any] | None = field(default=None, repr=False)
    assistant_id: str | None = None
    draft_version: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def summary(self) -> pd.DataFrame:
        """The leaderboard (one row per arm, the control first)."""
        return self.leaderboard

    @property
    def winner(self) -> str | None:
        """The name of the confirmed improvement, or None."""
        value = self.details.get("winner")
        return str(value) if value else None

    @property
    def selected(self) -> str | None:
        """The arm chosen on the selection cells (confirmed or not)."""
        value = self.details.get("selected")
        return str(value) if value else None

    @property
    def control(self) -> str:
        return str(self.details.get("control", "control"))

    @property
    def method(self) -> str:
        """The selection-aware method, in words."""
        return str(self.details.get("method", ""))

    @property
    def n(self) -> int:
        """Cells in the sweep (each arm ran every cell it was not dropped from)."""
        return int(self.details.get("cells", 0))

    @property
    def verdict(self) -> str:
        """``improved`` with a confirmed winner, else ``no_winner``."""
        return "improved" if self.winner else "no_winner"

    def _lead_row(self) -> Mapping[str, Any] | None:
        name = self.winner or self.selected
        if name is None or self.leaderboard.empty:
            return None
        rows = self.leaderboard[self.leaderboard["variant"] == name]
        return None if rows.empty else {str(k): v for k, v in rows.iloc[0].items()}

    @property
    def gain(self) -> ReportedGain:
        """The winner's gain and how it was measured: fresh repeats, else the held-out
        difference adjusted for the selection; unmeasured (NaN) without a winner, or when
        neither exists (``gain.method`` says)."""
        row = self._lead_row() if self.winner else None
        return ReportedGain.of(row, self.details.get("gain_method"))

    @property
    def difference(self) -> float:
        """The winner's gain in points (:attr:`gain`); NaN without a measured one."""
        return self.gain.estimate

    @property
    def interval(self) -> tuple[float, float]:
        """The interval of :attr:`difference` (low, high)."""
        gain = self.gain
        return gain.low, gain.high

    @property
    def winner_variant(self) -> Variant | None:
        """The winner's :class:`~evalkit.Variant` (None without a winner, or when the sweep
        was decided from grades alone)."""
        return self.variants.get(self.winner) if self.winner else None

    @property
    def winner_config(self) -> dict[str, Any] | None:
        """The control's config with the winner's patch applied (credentials redacted)."""
        variant = self.winner_variant
        if variant is None or self.control_config is None:
            return None
        merged: dict[str, Any] = merge_patch(dict(self.control_config), dict(variant.patch))
        redacted: dict[str, Any] = redact_config(merged)
        return redacted

    @property
    def diff(self) -> str:
        """The winner's change against the control's config: a unified diff of the JSON,
        then the prompt (``agent.instructions``) line by line. Empty without a winner."""
        after = self.winner_config
        if after is None or self.control_config is None:
            return ""
        return config_diff(self.control_config, after, str(self.winner))

    def headline(self) -> str:
        """One line: the winner and its difference, or why there is none."""
        s = self.details
        arms = int(s.get("arms", 0))
        family = f"{arms} arm{'s' if arms != 1 else ''}"
        row = self._lead_row()
        if self.winner and row is not None:
            where = (
                f"confirmed on {s['holdout_cells']} held-out cells among {family}"
                if s.get("holdout_cells")
                else f"no held-out cells: tested on all cells, Bonferroni over {family}"
            )
            said = self.gain.words(
                self.winner, str(s["control"]), float(s.get("confidence", 0.95)), row
            )
            return f"improved: {said}; {where}, combined p = {s['combined_p']:.3g}"
        leader = s.get("leader") or self.selected or "the top arm"
        why = f"combined p = {s['combined_p']:.3g}, needs <= {s['alpha_one_sided']:.3g}"
        if s.get("chance_best") and arms > 1:
            return (
                f"no confirmed winner among {family}: {leader} leads, but the best by chance "
                f"is likely ({why})"
            )
        if s.get("chance_best"):
            return f"no confirmed improvement: {leader} looks better but is not confirmed ({why})"
        return f"no confirmed winner among {family}: none is above {s['control']}"

    def __str__(self) -> str:
        lines = [self.headline(), ""]
        for row in self.leaderboard.to_dict("records"):
            lines.append(
                f"  {row['variant']:<24} {row['verdict']:<22} score {_interval(row, 'score')}, "
                f"difference (all cells) {_interval(row, 'difference')}, held-out "
                f"{_interval(row, 'holdout_difference')}, n = {row['conversations']}, "
                f"agent latency {latency_words(row)}"
                f"{', cost ' + cost_words(row) if cost_words(row) != '-' else ''}"
                f"{'; ' + row['note'] if row['note'] else ''}"
            )
        lines += ["", f"method: {self.method}"]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def html_context(self) -> dict[str, Any]:
        """The leaderboard as shown: intervals in words, the winner's row marked."""
        rows = [
            {
                "confirmed": bool(row["confirmed"]),
                "cells": [
                    str(row["variant"]),
                    str(row["conversations"]),
                    _interval(row, "score"),
                    _interval(row, "difference"),
                    _interval(row, "holdout_difference"),
                    self._gain_cell(row),
                    str(row["verdict"]),
                    latency_words(row),
                    cost_words(row),
                    "" if pd.isna(row["dropped_at"]) else str(row["dropped_at"]),
                    "yes" if row["confirmed"] else "",
                    str(row["note"]),
                ],
            }
            for row in self.leaderboard.to_dict("records")
        ]
        return {"columns": _SHOWN, "rows": rows}

    def _gain_cell(self, row: Mapping[Any, Any]) -> str:
        if row.get("variant") != self.winner or not self.gain.measured:
            return ""
        gain = self.gain
        how = "fresh" if gain.method == "fresh repeats" else "adjusted"
        return f"{gain.estimate:+.1f} [{gain.low:+.1f}, {gain.high:+.1f}] ({how})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: summary, leaderboard rows, waves, warnings (credentials redacted)."""
        board = [
            {k: _json_value(v) for k, v in row.items()}
            for row in self.leaderboard.to_dict("records")
        ]
        waves = [
            {k: _json_value(v) for k, v in row.items()} for row in self.waves.to_dict("records")
        ]
        return {
            "winner": self.winner,
            "selected": self.selected,
            **winner_fields(self.gain, self._lead_row() if self.winner else None),
            "summary": {k: _json_value(v) for k, v in self.details.items()},
            "leaderboard": board,
            "waves": waves,
            "variants": {k: v.definition() for k, v in self.variants.items()},
            "assistant_id": self.assistant_id,
            "draft_version": self.draft_version,
            "warnings": list(self.warnings),
        }

    def promote(
        self, client: Client | AsyncClient | None = None, *, dry_run: bool = False
    ) -> Promotion:
        """Write the winner's config to the assistant's draft (E3); never publishes.

        Refuses without a confirmed winner, and when the draft's version moved since the sweep
        started (someone saved it meanwhile). ``dry_run``: the diff only, nothing written.
        Returns a :class:`~evalkit.tuning.Promotion` (its ``diff`` is logged before writing).
        """
        from ._promote import promote

        return promote(self, client, dry_run=dry_run)
