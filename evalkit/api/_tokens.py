"""``{{token}}`` placeholders in a prompt, and the variables records that leave one without a value.

The spec: a simulated call's ``variables`` are "the contact record for this simulated call ...
the agent substitutes its tokens". A token with no value stays verbatim, so the agent says
``{{appointment_date}}`` out loud and nothing refuses the call. This is the check that catches
it before a request is sent (the runner's pre-run check and the ``variables-missing`` lint rule).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["TOKEN_PATTERN", "MissingVariables", "missing_variables", "prompt_tokens"]

TOKEN_PATTERN: Final = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
"""``{{key}}`` or ``{{ key }}`` (the key without spaces)."""


def prompt_tokens(*texts: str | None) -> tuple[str, ...]:
    """The distinct token names in ``texts``, in order of first appearance."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in TOKEN_PATTERN.finditer(text or ""):
            seen.setdefault(match.group(1), None)
    return tuple(seen)


def _has_value(record: Mapping[str, Any], key: str) -> bool:
    value = record.get(key)
    if value is None:
        folded = key.casefold()  # the service's substitution falls back to a case-blind match
        value = next((v for k, v in record.items() if str(k).casefold() == folded), None)
    if value is None or (isinstance(value, str) and not value.strip()):
        return False
    return not (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class MissingVariables:
    """Which prompt tokens have no value, and in which records (1-based record numbers).

    ``tokens`` are the prompt's tokens; ``rows`` maps each missing token to the records that
    lack it; ``records`` is how many records were checked.
    """

    tokens: tuple[str, ...]
    rows: dict[str, tuple[int, ...]] = field(default_factory=dict)
    records: int = 0

    def __bool__(self) -> bool:
        return bool(self.rows)

    @property
    def names(self) -> tuple[str, ...]:
        """The tokens missing somewhere, in the prompt's order."""
        return tuple(t for t in self.tokens if t in self.rows)

    def describe(self, limit: int = 8) -> str:
        """One line per missing token: ``appointment_date: records 1, 2, 3 (of 5)``."""
        lines = []
        for name in self.names:
            rows = self.rows[name]
            shown = ", ".join(str(r) for r in rows[:limit])
            more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
            if len(rows) == self.records:
                lines.append(f"{{{{{name}}}}}: no record has a value (all {self.records})")
            else:
                lines.append(
                    f"{{{{{name}}}}}: no value in records {shown}{more} (of {self.records})"
                )
        return "; ".join(lines)


def missing_variables(
    tokens: Iterable[str], records: Iterable[Mapping[str, Any] | None]
) -> MissingVariables:
    """The ``tokens`` without a value (absent, empty, NaN) in each of ``records``.

    A ``None`` record is a call that sends no variables: every token is missing there.
    """
    wanted = tuple(tokens)
    rows: dict[str, list[int]] = {}
    n = 0
    for n, record in enumerate(records, start=1):
        for token in wanted:
            if record is None or not _has_value(record, token):
                rows.setdefault(token, []).append(n)
    return MissingVariables(wanted, {k: tuple(v) for k, v in rows.items()}, n)
