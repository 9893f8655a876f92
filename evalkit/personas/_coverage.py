"""What a search tried and what failed, by trait value; and the value pairs never tried."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import pandas as pd

from ._axes import TraitSpace, pairs_of

__all__ = ["COVERAGE_COLUMNS", "UNTRIED_COLUMNS", "coverage_table", "untried_pairs"]

COVERAGE_COLUMNS: Final = (
    "axis",
    "value",
    "asked",
    "refused",
    "dropped",
    "screened",
    "failing",
    "reported",
    "rules_reported",
)
UNTRIED_COLUMNS: Final = ("axis_a", "value_a", "axis_b", "value_b")


def coverage_table(
    space: TraitSpace,
    rows: Sequence[Mapping[str, Any]],
    failing: Iterable[str],
    reported: Mapping[str, Sequence[str]],
) -> pd.DataFrame:
    """One row per trait value: personas asked for with it, refused before running, dropped
    by the pilot, screened, failing a rule in screening, with a reported finding, and the
    rules reported for it. ``rows``: the personas table's rows (``label``, ``status``,
    ``kind``, ``traits``); ``failing``: labels with a kept pair; ``reported``: label -> rules."""
    failing_set = set(failing)
    table: dict[tuple[str, str], dict[str, Any]] = {
        (a.name, v): {
            "axis": a.name,
            "value": v,
            "asked": 0,
            "refused": 0,
            "dropped": 0,
            "screened": 0,
            "failing": 0,
            "reported": 0,
            "rules_reported": set(),
        }
        for a in space.axes
        for v in a.value_names
    }
    for row in rows:
        label = str(row.get("label") or "")
        for axis, value in dict(row.get("traits") or {}).items():
            entry = table.get((str(axis), str(value)))
            if entry is None:
                continue
            entry["asked"] += 1
            status = row.get("status")
            if status == "refused":
                entry["refused"] += 1
            elif status == "dropped":
                entry["dropped"] += 1
            else:
                entry["screened"] += 1
                entry["failing"] += label in failing_set
                if reported.get(label):
                    entry["reported"] += 1
                    entry["rules_reported"] |= set(reported[label])
    out = pd.DataFrame(list(table.values()), columns=list(COVERAGE_COLUMNS))
    out["rules_reported"] = [", ".join(sorted(r)) for r in out["rules_reported"]]
    return out


def untried_pairs(space: TraitSpace, screened: Iterable[Mapping[str, str]]) -> pd.DataFrame:
    """The value pairs of two axes no screened persona had (what pairwise coverage misses)."""
    covered: set[Any] = set()
    for traits in screened:
        covered |= pairs_of(traits, space.names)
    missing = [p for p in space.pairs() if p not in covered]
    return pd.DataFrame(
        [(a, va, b, vb) for (a, va), (b, vb) in missing], columns=list(UNTRIED_COLUMNS)
    )
