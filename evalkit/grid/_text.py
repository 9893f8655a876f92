"""Text the service can receive: JSON bodies go out as UTF-8, so a lone surrogate cannot."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..api import Problem

__all__ = ["encodable", "unsendable_text"]

_MESSAGE = "holds a lone UTF-16 surrogate ({char!r} at {pos}), which cannot be sent as UTF-8"


def encodable(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate(text: str) -> tuple[str, int]:
    pos = next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)
    return text[pos], pos


def _problem(field: str, text: str, what: str = "") -> Problem:
    char, pos = _surrogate(text)
    return Problem(field, what + _MESSAGE.format(char=char, pos=pos))


def unsendable_text(value: Any, field: str) -> Iterator[Problem]:
    """A problem per string (key or value) in JSON-like ``value`` that is not valid UTF-8.

    Field paths follow the grid's style (``variables[0].name``, ``contexts[1]``); a bad key is
    named by its repr, which escapes the surrogate.
    """
    if isinstance(value, str):
        if not encodable(value):
            yield _problem(field, value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not encodable(key):
                path = f"{field}[{key!r}]"  # repr escapes the surrogate
                yield _problem(path, key, "key ")
                yield from unsendable_text(item, path)
            else:
                yield from unsendable_text(item, f"{field}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from unsendable_text(item, f"{field}[{i}]")
