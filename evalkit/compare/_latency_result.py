"""The result of :func:`evalkit.compare.compare_latency`: one row per quantile and a verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from .._exceptions import EvalkitError
from .._results import Result
from ._verdict import Verdict

__all__ = ["LATENCY_COLUMNS", "LatencyComparison", "LatencyUnavailableError", "quantile_name"]

#: The columns of :attr:`LatencyComparison.summary`, in order.
LATENCY_COLUMNS = (
    "quantile",
    "baseline",
    "candidate",
    "difference",
    "difference_low",
    "difference_high",
    "verdict",
)


class LatencyUnavailableError(EvalkitError, ValueError):
    """A side has no turn timing (a run recorded before ``at_s``, or no agent answers)."""


def quantile_name(q: float) -> str:
    """``0.5`` -> ``"p50"``, ``0.95`` -> ``"p95"``, ``0.999`` -> ``"p99.9"``."""
    return f"p{100 * q:g}"


def _seconds(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f} s"


def _signed(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.2f} s"


@dataclass(frozen=True, repr=False, eq=False)
class LatencyComparison(Result):
    """Agent response time, candidate against baseline: :attr:`summary` has one row per
    quantile (``quantile``, ``baseline``, ``candidate``, ``difference`` = candidate - baseline
    in seconds, its interval, ``verdict``: ``regressed`` = slower); :attr:`verdict` is the
    overall call (any quantile slower is ``regressed``), decided on intervals adjusted for the
    number of quantiles. :attr:`first_turn` compares the conversations' ``first_turn_s`` (the
    first turn carries the connection set-up) the same way, when both sides have it.
    """

    table: pd.DataFrame
    verdict: Verdict
    confidence: float
    min_effect_s: float
    n: tuple[int, int]
    turns: tuple[int, int]
    cells: tuple[int, int]
    method: str
    warnings: list[str] = field(default_factory=list)
    first_turn: pd.DataFrame | None = None
    interleaved: bool | None = None

    template: ClassVar[str] = "latency.html"

    @property
    def summary(self) -> pd.DataFrame:
        """One row per quantile (a copy)."""
        return self.table.copy()

    @property
    def difference(self) -> float:
        """The first quantile's difference (candidate - baseline, seconds)."""
        return float(self.table["difference"].iloc[0])

    @property
    def interval(self) -> tuple[float, float]:
        """The first quantile's interval of the difference."""
        row = self.table.iloc[0]
        return float(row["difference_low"]), float(row["difference_high"])

    def headline(self) -> str:
        level = round(100 * self.confidence)
        parts = []
        for row in self.table.to_dict("records"):
            parts.append(
                f"{row['quantile']} {_seconds(row['baseline'])} -> {_seconds(row['candidate'])} "
                f"({_signed(row['difference'])}, {level}% CI {_signed(row['difference_low'])} "
                f"to {_signed(row['difference_high'])})"
            )
        return (
            f"agent latency {self.verdict.value}: {'; '.join(parts)}; "
            f"{self.n[0]} vs {self.n[1]} conversations, {self.turns[0]} vs {self.turns[1]} "
            f"agent turns (min effect {self.min_effect_s:g} s)"
        )

    def html_context(self) -> dict[str, Any]:
        return {"table": self.table, "first_turn": self.first_turn, "warnings": self.warnings}

    def to_dict(self) -> dict[str, Any]:
        def rows(frame: pd.DataFrame | None) -> list[dict[str, Any]] | None:
            if frame is None:
                return None
            return [
                {
                    str(k): (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in record.items()
                }
                for record in frame.to_dict("records")
            ]

        return {
            "verdict": self.verdict.value,
            "headline": self.headline(),
            "confidence": self.confidence,
            "min_effect_s": self.min_effect_s,
            "conversations": {"baseline": self.n[0], "candidate": self.n[1]},
            "agent_turns": {"baseline": self.turns[0], "candidate": self.turns[1]},
            "cells": {"baseline": self.cells[0], "candidate": self.cells[1]},
            "interleaved": self.interleaved,
            "method": self.method,
            "warnings": list(self.warnings),
            "quantiles": rows(self.table),
            "first_turn": rows(self.first_turn),
        }
