"""The pre-run check of a proposed prompt: refused before any conversation, with the reason.

A proposal is first normalised (:func:`clean_prompt`): Unicode NFKC (full-width and other
compatibility forms become their plain letters), then invisible format characters (zero-width
spaces, word joiners, byte-order marks, soft hyphens, the implicit direction marks LRM/RLM/ALM,
tag characters) are removed, keeping the zero-width joiner and non-joiner that Urdu, Persian
and Indic scripts spell with, and the ends are trimmed. What is raced, recorded and written to
a clone's config is the normalised text; every check below reads it.

A candidate is **refused** when it holds a control character (NUL, escape, ... other than tab
and line breaks), an explicit bidirectional control (embeddings, overrides and isolates,
U+202A-U+202E and U+2066-U+2069: they can make a prompt read differently from what it says), or
a lone surrogate (not text); when it is empty; when it is prose about a prompt rather than a
prompt (it opens like an answer to the proposer's question); when it is over the service's
prompt limit (``max_prompt_chars``; the spec does not show one, so it is the caller's); when it
drops a ``{{token}}`` of the current prompt that the grid's records fill; or when it adds a
token some record has no value for (the runner's pre-run token check). It is a **duplicate**
when it repeats the current prompt or another candidate.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..api import missing_variables, prompt_tokens

__all__ = [
    "Refusal",
    "check_candidate",
    "clean_prompt",
    "clean_text",
    "is_text",
    "needed_tokens",
]

_PROSE_RE: Final = re.compile(
    r"^\s*(here(?:'s| is| are)\b|sure\b|certainly\b|i (?:would|suggest|recommend)\b|"
    r"as an ai\b|the (?:new|improved|updated) prompt\b)",
    re.IGNORECASE,
)
_KEPT_FORMAT: Final = frozenset({"\u200c", "\u200d"})  # ZWNJ, ZWJ: spelling in Urdu, Persian
_BIDI_CONTROLS: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ALLOWED_CONTROLS: Final = frozenset("\t\n\r")
_TRIM: Final = "".join(sorted(_KEPT_FORMAT))


@dataclass(frozen=True)
class Refusal:
    """Why a candidate is not raced: ``refused`` (it cannot or should not run) or
    ``duplicate`` (it repeats the current prompt or another candidate)."""

    kind: Literal["refused", "duplicate"]
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


def is_text(text: str) -> bool:
    """True when ``text`` is encodable text (no lone surrogate): what can be recorded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (for words kept beside a prompt, such
    as a proposer's rationale)."""
    return "".join("\ufffd" if unicodedata.category(ch) == "Cs" else ch for ch in text)


def clean_prompt(text: str) -> str:
    """NFKC, invisible format characters removed (ZWJ and ZWNJ kept inside words), the ends
    trimmed (module docstring). Explicit bidirectional controls are kept, to be refused."""
    normal = unicodedata.normalize("NFKC", text)
    kept = "".join(
        ch
        for ch in normal
        if unicodedata.category(ch) != "Cf" or ch in _KEPT_FORMAT or ch in _BIDI_CONTROLS
    )
    return kept.strip().strip(_TRIM).strip()


def _forbidden(text: str) -> str | None:
    """The first character a prompt may not hold, in words; None when there is none."""
    for ch in text:
        code = f"U+{ord(ch):04X}"
        category = unicodedata.category(ch)
        if category == "Cs":
            return f"holds a lone surrogate ({code}), not text"
        if category == "Cc" and ch not in _ALLOWED_CONTROLS:
            return f"holds the control character {code}"
        if ch in _BIDI_CONTROLS:
            name = unicodedata.name(ch, "bidirectional control")
            return f"holds the bidirectional control {code} ({name})"
    return None


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
) -> Refusal | None:
    """Why ``text`` (a proposal as the proposer wrote it) cannot be raced (module
    docstring), or None when its :func:`clean_prompt` form can."""
    forbidden = _forbidden(text)
    if forbidden is not None:
        return Refusal("refused", forbidden)
    prompt = clean_prompt(text)
    if not prompt:
        return Refusal("refused", "empty prompt")
    if _PROSE_RE.match(prompt):
        return Refusal("refused", "prose, not a prompt")
    if max_chars is not None and len(prompt) > max_chars:
        return Refusal(
            "refused", f"{len(prompt):,} characters, over the prompt limit of {max_chars:,}"
        )
    tokens = set(prompt_tokens(prompt))
    dropped = sorted(set(keep) - tokens)
    if dropped:
        names = ", ".join("{{" + t + "}}" for t in dropped)
        return Refusal("refused", f"drops {names}, which the records fill")
    missing = missing_variables(sorted(tokens - set(keep)), records)
    if missing:
        return Refusal("refused", f"adds tokens the records do not fill: {missing.describe()}")
    if prompt == clean_prompt(current):
        return Refusal("duplicate", "unchanged from the current prompt")
    if prompt in {clean_prompt(s) for s in seen}:
        return Refusal("duplicate", "the same as another candidate")
    return None
