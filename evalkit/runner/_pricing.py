"""A price table: what a simulated conversation and a judge call cost.

::

    currency: USD
    simulation:                       # by the assistant's LLM provider and model
      vendor_c/llm-5.4-mini: {per_minute: 0.06, per_turn: 0.002}
      vendor_c/*: {per_minute: 0.05}  # any other model of the provider
    judge:                            # by judge model, per 1000 tokens (grades record them)
      gpt-judge: {per_1k_tokens: 0.0006}

Minutes are the conversations' own ``duration_s``. ``Pricing.load("pricing.yaml")`` reads a file
(a problem names its line), ``Pricing({...})`` takes the same shape.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from .._exceptions import EvalkitError
from ..api import LLM_MODELS
from ..data import resolve
from ..targets import merge_patch

__all__ = [
    "DEFAULT_MINUTES",
    "DEFAULT_TURNS",
    "Cost",
    "Pricing",
    "PricingError",
    "llm_of",
    "manifest_llm",
]

#: what an estimate before a run assumes of a conversation it has not seen
DEFAULT_TURNS: Final = 10
DEFAULT_MINUTES: Final = 1.5

_SIMULATION_FIELDS: Final = ("per_minute", "per_turn")
_JUDGE_FIELDS: Final = ("per_1k_tokens",)
_TOP: Final = frozenset({"currency", "simulation", "judge"})


class PricingError(EvalkitError, ValueError):
    """A price table that cannot be used; the message names the line (or the key)."""


@dataclass(frozen=True)
class Cost:
    """Spend in the table's currency: simulated conversations, judge calls, and their sum."""

    simulation: float
    judge: float
    currency: str

    @property
    def total(self) -> float:
        return self.simulation + self.judge

    def to_dict(self) -> dict[str, Any]:
        return {
            "currency": self.currency,
            "simulation": round(self.simulation, 6),
            "judge": round(self.judge, 6),
            "total": round(self.total, 6),
        }


def llm_of(config: Mapping[str, Any] | None) -> str | None:
    """``"provider/model"`` of a config's ``llm.default`` (None when it has none)."""
    llm = (config or {}).get("llm")
    block = llm.get("default") if isinstance(llm, Mapping) else None
    if isinstance(block, Mapping) and block.get("provider") and block.get("model"):
        return f"{block['provider']}/{block['model']}"
    return None


def manifest_llm(manifest: Mapping[str, Any]) -> str | None:
    """``provider/model`` a stored run exercised: its snapshot's config, with its variant's
    patch when it ran one."""
    snapshot = manifest.get("config_snapshot")
    config = snapshot.get("config") if isinstance(snapshot, Mapping) else None
    variant = manifest.get("variant")
    if isinstance(variant, Mapping) and isinstance(variant.get("patch"), Mapping):
        config = merge_patch(config or {}, variant["patch"])
    return llm_of(config if isinstance(config, Mapping) else None)


def _lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of every key path in a YAML mapping document."""
    out: dict[tuple[str, ...], int] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                here = (*path, str(key.value))
                out[here] = key.start_mark.line + 1
                walk(value, here)

    with contextlib.suppress(yaml.YAMLError):
        walk(yaml.compose(text), ())
    return out


class Pricing:
    """Prices per simulated conversation (per minute and per turn, by ``provider/model``) and
    per judge model (per 1000 tokens); ``Pricing.load(path)`` or ``Pricing({...})``."""

    def __init__(
        self,
        table: Mapping[str, Any],
        *,
        source: str = "pricing",
        lines: Mapping[tuple[str, ...], int] | None = None,
    ) -> None:
        self.source = source
        self._lines = dict(lines or {})
        if not isinstance(table, Mapping):
            raise PricingError(f"{source}: a price table is a mapping with simulation and judge")
        unknown = sorted(set(map(str, table)) - _TOP)
        if unknown:
            raise PricingError(
                self._where(unknown[0])
                + f": unknown key {unknown[0]!r} (known: currency, simulation, judge)"
            )
        self.currency = str(table.get("currency") or "USD")
        self.simulation = self._section(table, "simulation", _SIMULATION_FIELDS)
        self.judge = self._section(table, "judge", _JUDGE_FIELDS)
        for key in self.simulation:
            self._check_llm(key)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Pricing:
        """Read a price table from a YAML file, or the bundled example by name
        (``pricing.yaml``); a problem names the file and line."""
        file = Path(path)
        try:
            file = resolve(path, "examples")
            text = file.read_text("utf-8")
        except OSError as exc:
            raise PricingError(
                f"cannot read the price table {file}: {exc.strerror or exc}"
            ) from None
        try:
            table = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PricingError(f"{file}: not valid YAML ({exc})") from None
        return cls(table if table is not None else {}, source=str(file), lines=_lines(text))

    def __repr__(self) -> str:
        return (
            f"Pricing({self.currency}, simulation: {len(self.simulation)} model(s), "
            f"judge: {len(self.judge)} model(s))"
        )

    # ------------------------------------------------------------------ reading the table

    def _where(self, *path: str) -> str:
        line = self._lines.get(tuple(path))
        where = f"line {line}" if line is not None else ".".join(path)
        return f"{self.source}, {where}"

    def _section(
        self, table: Mapping[str, Any], name: str, known: tuple[str, ...]
    ) -> dict[str, dict[str, float]]:
        section = table.get(name) or {}
        if not isinstance(section, Mapping):
            raise PricingError(f"{self._where(name)}: {name} must map names to prices")
        out: dict[str, dict[str, float]] = {}
        for key, prices in section.items():
            key = str(key)
            if not isinstance(prices, Mapping) or not prices:
                raise PricingError(
                    f"{self._where(name, key)}: {key} needs prices ({', '.join(known)})"
                )
            row: dict[str, float] = {}
            for field, value in prices.items():
                where = self._where(name, key, str(field))
                if field not in known:
                    raise PricingError(
                        f"{where}: unknown price {field!r} for {key} (known: {', '.join(known)})"
                    )
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise PricingError(f"{where}: {key} {field} must be a number, not {value!r}")
                if not math.isfinite(value) or value < 0:
                    raise PricingError(f"{where}: {key} {field} must be a price >= 0, not {value}")
                row[str(field)] = float(value)
            out[key] = row
        return out

    def _check_llm(self, key: str) -> None:
        provider, _, model = key.partition("/")
        where = self._where("simulation", key)
        if provider not in LLM_MODELS:
            raise PricingError(
                f"{where}: unknown provider {provider!r} in {key!r} (known: "
                f"{', '.join(sorted(LLM_MODELS))}; write provider/model or provider/*)"
            )
        if model != "*" and model not in LLM_MODELS[provider]:
            raise PricingError(
                f"{where}: {provider} has no model {model!r} (known: "
                f"{', '.join(LLM_MODELS[provider])}, or * for any)"
            )

    # ------------------------------------------------------------------ prices

    def simulation_price(self, llm: str | None) -> dict[str, float] | None:
        """The simulation row for ``"provider/model"`` (or its ``provider/*``); None if none."""
        if llm is None:
            return None
        provider = llm.partition("/")[0]
        return self.simulation.get(llm) or self.simulation.get(f"{provider}/*")

    def require(self, llm: str | None) -> dict[str, float]:
        """The simulation row for ``llm``, or a :class:`PricingError` saying what is missing."""
        row = self.simulation_price(llm)
        if row is None:
            raise PricingError(
                f"{self.source} has no simulation price for {llm or 'this assistant (no llm)'}: "
                f"add {llm or 'provider/model'}: {{per_minute: ..., per_turn: ...}}"
            )
        return row

    def conversation_cost(self, llm: str | None, duration_s: float | None, n_turns: float) -> float:
        """One conversation's cost (0 when the table has no price for ``llm``)."""
        row = self.simulation_price(llm)
        if row is None:
            return 0.0
        minutes = (duration_s or 0.0) / 60 if duration_s == duration_s else 0.0
        return row.get("per_minute", 0.0) * minutes + row.get("per_turn", 0.0) * n_turns

    def judge_cost(self, model: str | None, tokens: float) -> float:
        """The cost of ``tokens`` judge tokens of ``model`` (0 when it has no price)."""
        row = self.judge.get(str(model)) if model else None
        return 0.0 if row is None else row["per_1k_tokens"] * tokens / 1000

    def expected_cost(
        self,
        llm: str | None,
        conversations: float,
        *,
        turns: float = DEFAULT_TURNS,
        minutes: float = DEFAULT_MINUTES,
    ) -> float:
        """What ``conversations`` conversations should cost, at ``turns`` and ``minutes`` each
        (defaults: a typical rehearsed call)."""
        return conversations * self.conversation_cost(llm, minutes * 60, turns)

    def conversations_cost(
        self, llm: str | None, rows: Iterable[tuple[float | None, int]]
    ) -> float:
        """The cost of conversations given as ``(duration_s, n_turns)`` pairs."""
        return sum(self.conversation_cost(llm, d, n) for d, n in rows)

    def run_cost(self, run: Any) -> Cost:
        """A stored run's cost: its conversations (by its assistant's LLM) and its judge
        calls (the tokens its grades record, by judge model)."""
        llm = manifest_llm(getattr(run, "manifest", {}) or {})
        conv = run.conversations
        simulation = self.conversations_cost(
            llm, zip(conv["duration_s"].tolist(), conv["n_turns"].tolist(), strict=True)
        )
        judge = 0.0
        grades = run.grades()
        if len(grades) and "judge_model" in grades.columns:
            tokens = grades["prompt_tokens"].fillna(0).astype("float64") + grades[
                "completion_tokens"
            ].fillna(0).astype("float64")
            by_model = tokens.groupby(grades["judge_model"].astype("object")).sum()
            judge = sum(self.judge_cost(str(m), float(t)) for m, t in by_model.items())
        return Cost(simulation, judge, self.currency)

    def money(self, amount: float) -> str:
        """``amount`` with the currency: ``USD 1.23``."""
        return f"{self.currency} {amount:,.2f}"
