"""The results of the persona flows: the personas generated (:class:`GeneratedPersonas`) and
the callers found to break a draft (:class:`FailureSearch`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import pandas as pd

from .._results import Result, json_records, json_value
from ..grid import Persona
from ._files import write_personas

__all__ = ["FINDING_COLUMNS", "FailureSearch", "GeneratedPersonas"]

#: Why a persona did not join, in the words of a headline (by refusal kind).
_KIND_WORDS: Final = {
    "missing": "not written by the generator",
    "invalid": "invalid",
    "too-long": "over the length limit",
    "secret": "holding a secret",
    "token": "holding a token the records cannot fill",
    "not-said": "leaving out a trait asked for",
    "duplicate": "near-duplicate",
    "not-shown": "whose caller did not behave as described",
}

FINDING_COLUMNS: Final = (
    "persona",
    "traits",
    "rule_id",
    "title",
    "screen_failures",
    "screen_decided",
    "failures",
    "decided",
    "rate",
    "rate_low",
    "rate_high",
    "p_value",
    "p_adjusted",
    "reported",
    "rule_base_rate",
    "example_conversation_id",
    "example",
)
"""The findings table: one row per (persona, rule) pair confirmed on fresh repeats."""


def _left_out(table: pd.DataFrame) -> str:
    if table.empty:
        return ""
    gone = table[table["status"] != "kept"]
    counts = Counter(str(k) for k in gone["kind"])
    return ", ".join(f"{n} {_KIND_WORDS.get(kind, kind)}" for kind, n in sorted(counts.items()))


def _percent(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if number != number else f"{number:.0%}"


def _table(frame: pd.DataFrame) -> dict[str, Any]:
    """A frame as the template's columns and rows of text."""
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": [
            {"strong": False, "cells": ["" if v is None else str(v) for v in row]}
            for row in frame.itertuples(index=False)
        ],
    }


def _traits_frame(rows: list[dict[str, Any]], axes: tuple[str, ...]) -> pd.DataFrame:
    """The persona rows with one column per axis instead of a traits mapping."""
    flat = []
    for row in rows:
        traits = dict(row.get("traits") or {})
        flat.append(
            {**{k: v for k, v in row.items() if k != "traits"}, **{a: traits.get(a) for a in axes}}
        )
    return pd.DataFrame(flat)


@dataclass(frozen=True, repr=False)
class GeneratedPersonas(Result):
    """What :func:`evalkit.generate_personas` made.

    ``personas``: the personas that passed every check (and the pilot), ready for a
    :class:`~evalkit.Grid` (or :meth:`write` them as persona files). ``table``: one row per
    persona asked for: ``round``, ``request``, ``label``, ``status`` (``kept``, ``refused``
    before running, ``dropped`` after the pilot), ``kind`` and ``reason`` of a refusal, and
    one column per trait axis. ``details``: the generator, its prompt version, the seed, the
    generator calls and malformed answers, the pilot's run id and conversations.
    """

    template: ClassVar[str] = "generated_personas.html"

    personas: tuple[Persona, ...]
    table: pd.DataFrame
    details: Mapping[str, Any] = field(default_factory=dict)

    def headline(self) -> str:
        asked = len(self.table)
        why = _left_out(self.table)
        pilot = int(self.details.get("pilot_conversations", 0))
        ran = f", {pilot} pilot conversations" if pilot else ", no pilot"
        calls = int(self.details.get("generator_calls", 0))
        return (
            f"{len(self.personas)} of {asked} generated persona(s) kept"
            + (f" ({why})" if why else "")
            + f"; {calls} generator call(s){ran}"
        )

    @property
    def summary(self) -> pd.DataFrame:
        """One row per persona asked for (the :attr:`table`)."""
        return self.table

    def write(self, folder: str | os.PathLike[str]) -> list[Path]:
        """The kept personas as persona files in ``folder`` (one YAML each); the paths."""
        return write_personas(self.personas, folder)

    def html_context(self) -> dict[str, Any]:
        return {"personas": self.personas}

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "personas": [p.to_mapping() for p in self.personas],
            "table": json_records(self.table),
            "details": json_value(dict(self.details)),
        }


@dataclass(frozen=True, repr=False)
class FailureSearch(Result):
    """What :func:`evalkit.find_failures` found.

    ``findings``: one row per (persona, rule) pair confirmed on fresh repeats
    (:data:`FINDING_COLUMNS`): the screening failures that kept it, the fresh ``failures`` of
    ``decided`` verdicts, their ``rate`` with its Clopper-Pearson interval (``rate_low``,
    ``rate_high``), the one-sided exact ``p_value`` against the threshold and Holm's
    ``p_adjusted`` over the search, ``reported``, the rule's failure share over every screened
    conversation (``rule_base_rate``: a rule every caller fails is the draft's, not the
    caller's), and a failing fresh conversation with its grader's reason. ``summary``: the
    reported rows. ``personas``: one row per persona asked for (``round``, ``request``,
    ``label``, ``status``, ``kind``, ``reason``, ``screen_failures``, ``kept_rules``,
    ``confirmed``, ``reported_rules`` and one column per axis). ``rounds``: one row per round.
    ``coverage``: per trait value, what was asked, refused, dropped, screened, failing and
    reported; ``untried``: the value pairs no screened persona had. ``found``: the personas
    with a reported finding (:meth:`write` makes them a persona folder for the regression
    grid). ``decision``: the method, threshold, confidence, tests, conversations, budget.
    """

    template: ClassVar[str] = "failure_search.html"

    findings: pd.DataFrame
    personas: pd.DataFrame
    rounds: pd.DataFrame
    coverage: pd.DataFrame
    untried: pd.DataFrame
    found: tuple[Persona, ...]
    decision: Mapping[str, Any]
    warnings: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Conversations spent (screening and confirmation)."""
        return int(self.decision.get("conversations", 0))

    @property
    def summary(self) -> pd.DataFrame:
        """The reported findings: persona, traits, rule, fresh failures, rate and interval,
        an example conversation."""
        columns = [
            "persona",
            "traits",
            "rule_id",
            "failures",
            "decided",
            "rate",
            "rate_low",
            "rate_high",
            "p_adjusted",
            "example_conversation_id",
        ]
        if self.findings.empty:
            return pd.DataFrame(columns=columns)
        return self.findings.loc[self.findings["reported"], columns].reset_index(drop=True)

    def headline(self) -> str:
        d = self.decision
        reported = self.summary
        level = 1.0 - float(d.get("confidence", 0.95))
        threshold = float(d.get("threshold", 0.25))
        asked, kept = len(self.personas), int(d.get("screened_personas", 0))
        spent = f"{asked} persona(s) generated, {kept} screened, {self.n} conversations"
        rule = (
            f"failure rate above {threshold:.0%} on fresh repeats, Holm over "
            f"{int(d.get('tests', 0))} test(s) at {level:.0%}"
        )
        if reported.empty:
            tested = int(d.get("confirmed_personas", 0))
            if not tested:
                return f"no caller made a rule fail in screening ({spent})"
            return f"no failure confirmed among {tested} persona(s) re-run ({rule}; {spent})"
        shown = []
        for persona, rows in reported.groupby("persona", sort=False):
            parts = [
                f"{rule} {int(fails)}/{int(decided)} [{low:.0%}, {high:.0%}]"
                for rule, fails, decided, low, high in zip(
                    rows["rule_id"],
                    rows["failures"],
                    rows["decided"],
                    rows["rate_low"],
                    rows["rate_high"],
                    strict=True,
                )
            ]
            shown.append(f"{persona} fails {', '.join(parts)}")
        people = reported["persona"].nunique()
        return f"{people} caller(s) break the draft ({rule}): {'; '.join(shown)} ({spent})"

    def write(self, folder: str | os.PathLike[str]) -> list[Path]:
        """The personas with a reported finding as persona files in ``folder`` (one YAML
        each), ready to add to the regression grid; the paths."""
        return write_personas(self.found, folder)

    def html_context(self) -> dict[str, Any]:
        tested = [
            {
                "strong": bool(r.reported),
                "cells": [
                    r.persona,
                    r.traits,
                    r.rule_id,
                    f"{r.screen_failures}/{r.screen_decided}",
                    f"{r.failures}/{r.decided}",
                    _percent(r.rate),
                    f"[{_percent(r.rate_low)}, {_percent(r.rate_high)}]",
                    f"{r.p_adjusted:.3g}",
                    "yes" if r.reported else "no",
                    _percent(r.rule_base_rate),
                    r.example_conversation_id,
                    r.example,
                ],
            }
            for r in self.findings.itertuples()
        ]
        columns = [
            "persona",
            "traits",
            "rule",
            "screening",
            "fresh",
            "rate",
            "interval",
            "Holm p",
            "reported",
            "rule's rate overall",
            "example",
            "grader's reason",
        ]
        return {
            "tested": {"columns": columns, "rows": tested},
            "coverage": _table(self.coverage),
            "untried": len(self.untried),
            "rounds": _table(self.rounds),
            "warnings": self.warnings,
            "method": self.decision.get("method", ""),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "conversations": self.n,
            "findings": json_records(self.findings),
            "personas": json_records(self.personas),
            "rounds": json_records(self.rounds),
            "coverage": json_records(self.coverage),
            "untried": json_records(self.untried),
            "found": [p.to_mapping() for p in self.found],
            "decision": json_value(dict(self.decision)),
            "warnings": list(self.warnings),
        }
