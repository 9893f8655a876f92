"""Reading an answer: the first JSON object in the content, and the error of an answer that is
not what was asked for."""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["MalformedAnswer", "extract_json_object"]

_FENCE_RE: Final = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_DECODER: Final = json.JSONDecoder()


class MalformedAnswer(ValueError):
    """The endpoint answered, but not with what was asked for (asked again at once)."""


def _first_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start != -1:
        try:
            value, _end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def extract_json_object(content: str) -> dict[str, Any]:
    """The answer's JSON object: the whole content, a fenced block, or the first ``{...}``."""
    stripped = content.strip()
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return whole
    for block in _FENCE_RE.findall(stripped):
        found = _first_object(block)
        if found is not None:
            return found
    found = _first_object(stripped)
    if found is None:
        excerpt = " ".join(stripped.split())[:80]
        raise MalformedAnswer(f"no JSON object in the answer (starts {excerpt!r})")
    return found
