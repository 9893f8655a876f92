"""The pre-run check of a proposed prompt: refused before any conversation, with the reason.

A candidate is refused when it is empty, when it is prose about a prompt rather than a prompt
(it opens like an answer to the proposer's question), when it is over the service's prompt
limit (``max_prompt_chars``; the spec does not show one, so it is the caller's), when it drops
a ``{{token}}`` of the current prompt that the grid's records fill, when it adds a token some
record has no value for (the runner's pre-run token check), or when it repeats the current
prompt or another candidate.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from ..api import missing_variables, prompt_tokens

__all__ = ["check_candidate", "needed_tokens"]

_PROSE_RE: Final = re.compile(
    r"^\s*(here(?:'s| is| are)\b|sure\b|certainly\b|i (?:would|suggest|recommend)\b|"
    r"as an ai\b|the (?:new|improved|updated) prompt\b)",
    re.IGNORECASE,
)


def needed_tokens(instructions: str, records: Sequence[Mapping[str, Any] | None]) -> set[str]:
    """The tokens of ``instructions`` that every record fills (what a candidate must keep)."""
    tokens = prompt_tokens(instructions)
    missing = missing_variables(tokens, records)
    return {t for t in tokens if t not in missing.rows}


def check_candidate(
    text: str,
    *,
    current: str,
    keep: Collection[str],
    records: Sequence[Mapping[str, Any] | None],
    seen: Collection[str] = (),
    max_chars: int | None = None,
) -> str | None:
    """Why ``text`` cannot be raced (module docstring), or None when it can."""
    if not text.strip():
        return "empty prompt"
    if _PROSE_RE.match(text):
        return "prose, not a prompt"
    if max_chars is not None and len(text) > max_chars:
        return f"{len(text):,} characters, over the prompt limit of {max_chars:,}"
    tokens = set(prompt_tokens(text))
    dropped = sorted(set(keep) - tokens)
    if dropped:
        names = ", ".join("{{" + t + "}}" for t in dropped)
        return f"drops {names}, which the records fill"
    missing = missing_variables(sorted(tokens - set(keep)), records)
    if missing:
        return f"adds tokens the records do not fill: {missing.describe()}"
    if text.strip() == current.strip():
        return "unchanged from the current prompt"
    if text.strip() in {s.strip() for s in seen}:
        return "the same as another candidate"
    return None
