"""Which conversations pass a set of filters (persona, rule, verdict, status, text): the one
rule the RunBrowser widget and the web viewer share."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ANY", "Filters", "filter_conversations", "record_text", "searchable_text"]

#: The value of a filter that lets everything through.
ANY = ""


@dataclass(frozen=True)
class Filters:
    """Filter values; empty strings mean "any". ``rule`` and ``verdict`` together keep the
    conversations where that rule got that verdict; ``text`` searches turns, id, persona and
    variables, ignoring case."""

    persona: str = ANY
    rule: str = ANY
    verdict: str = ANY
    status: str = ANY
    text: str = ANY

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Filters:
        """Filters from a query string or form (unknown keys ignored)."""
        return cls(**{k: str(values.get(k) or ANY).strip() for k in cls.__dataclass_fields__})

    def as_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def record_text(variables: Any) -> str:
    """A variables record (JSON text) as its values joined with commas."""
    try:
        record = json.loads(str(variables))
    except ValueError:
        return str(variables)
    if isinstance(record, dict):
        return ", ".join(str(v) for v in record.values())
    return str(record)


def searchable_text(conversations: pd.DataFrame, turns: pd.DataFrame) -> dict[str, str]:
    """Casefolded text per conversation id: id, persona, variables' values and every turn."""
    joined = turns.groupby(turns["conversation_id"].astype(str))["text"].agg(
        lambda texts: "\n".join(str(t) for t in texts)
    )
    return {
        str(cid): " ".join(
            (str(cid), str(persona), record_text(variables), str(joined.get(str(cid), "")))
        ).casefold()
        for cid, persona, variables in zip(
            conversations["conversation_id"],
            conversations["persona_label"],
            conversations["variables"],
            strict=True,
        )
    }


def filter_conversations(
    conversations: pd.DataFrame,
    grades: pd.DataFrame,
    filters: Filters,
    text: Mapping[str, str] | None = None,
) -> list[str]:
    """Ids of ``conversations`` (indexed by conversation id) that pass ``filters``, in order.

    ``text`` is :func:`searchable_text` (needed only when ``filters.text`` is set).
    """
    f = filters
    conv = conversations
    keep = pd.Series(True, index=conv.index)
    if f.persona:
        keep &= conv["persona_label"] == f.persona
    if f.status:
        keep &= conv["status"] == f.status
    if f.rule or f.verdict:
        rows = pd.Series(True, index=grades.index)
        if f.rule:
            rows &= grades["rule_id"] == f.rule
        if f.verdict:
            rows &= grades["verdict"] == f.verdict
        keep &= conv.index.isin(set(grades.loc[rows, "conversation_id"].astype(str)))
    if f.text:
        needle = f.text.casefold()
        haystack = text or {}
        keep &= np.asarray([needle in haystack.get(str(c), "") for c in conv.index], dtype=bool)
    return [str(c) for c in conv.index[keep.to_numpy(dtype=bool)]]
