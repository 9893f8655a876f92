"""The words of a run's variables records (contact names, clinics, doctors): what a failure
cluster must never be split by nor labelled with.

The records come from the ``conversations`` frame's ``variables`` (JSON text) when given, and
from the run that stored the grades otherwise: a :class:`~evalkit.Grades` read from a store
knows its file (``grades/<rubric>.parquet`` inside the run folder), and the run's manifest holds
the grid's records (``manifest["grid"]["variables"]``). Only string values count; their words
are normalised as failure texts are (NFKC, case-folded).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any, Final

import pandas as pd

__all__ = ["RECORD_MASK", "hide_record_words", "mask_words", "record_value_words"]

_WORD_RE: Final = re.compile(r"[^\W\d_]+", re.UNICODE)
RECORD_MASK: Final = "[record]"
"""What stands for a record's word in a quote shown to a model (the proposer)."""
MIN_LETTERS: Final = 2
"""Shorter words (an initial, ``Dr`` is kept at two) are not masked."""


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _stored_records(grades: Any) -> list[Any]:
    """The grid's records of the run whose grades file ``grades.path`` is, if any."""
    path = getattr(grades, "path", None)
    if path is None:
        return []
    from ..store import read_stored_manifest

    try:
        manifest = read_stored_manifest(path.parent.parent)
    except (OSError, ValueError, AttributeError):
        return []
    grid = (manifest or {}).get("grid")
    records = grid.get("variables") if isinstance(grid, dict) else None
    return list(records) if isinstance(records, list) else []


def _frame_records(conversations: pd.DataFrame | None) -> list[Any]:
    if conversations is None or "variables" not in conversations.columns:
        return []
    out: list[Any] = []
    for text in conversations["variables"].dropna().astype(str).unique():
        try:
            out.append(json.loads(text))
        except ValueError:
            out.append(text)
    return out


def record_value_words(conversations: pd.DataFrame | None, *grades: Any) -> frozenset[str]:
    """Every word (normalised, at least ``MIN_LETTERS`` letters) of a string value of the
    records in ``conversations`` and in the runs the ``grades`` were read from."""
    records = _frame_records(conversations)
    for one in grades:
        records += _stored_records(one)
    words: set[str] = set()
    for text in (s for record in records for s in _strings(record)):
        folded = unicodedata.normalize("NFKC", text).casefold()
        words.update(w for w in _WORD_RE.findall(folded) if len(w) >= MIN_LETTERS)
    return frozenset(words)


def mask_words(texts: Iterable[str], words: frozenset[str]) -> list[str]:
    """``texts`` with each of ``words`` (whole words) replaced by a space."""
    if not words:
        return list(texts)
    return [_WORD_RE.sub(lambda m: " " if m.group(0) in words else m.group(0), t) for t in texts]


def hide_record_words(text: str, words: frozenset[str], mask: str = RECORD_MASK) -> str:
    """``text`` as written, with each word that is one of ``words`` (compared normalised, as
    :func:`record_value_words` makes them) replaced by ``mask``: a quote without the contact's
    name, clinic or doctor."""
    if not words:
        return text

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return mask if unicodedata.normalize("NFKC", word).casefold() in words else word

    return _WORD_RE.sub(swap, text)
