"""The one canonical-JSON form and content hash (cell ids, run identities, grade caches)."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any

__all__ = ["canonical_json", "content_hash", "json_default"]


def json_default(value: Any) -> Any:
    """JSON for the few non-JSON values evalkit stores: dates, paths, enums, sets, models."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value)
    dump = getattr(value, "model_dump", None)  # pydantic models
    if callable(dump):
        return dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def canonical_json(value: Any, *, allow_nan: bool = False) -> str:
    """Sorted keys, compact separators, real Unicode: the same value always gives the same text.

    Types matter (``1`` and ``1.0`` differ); key order does not; NaN is refused unless
    ``allow_nan`` (the emulator digests request bodies as sent, NaN included).
    """
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=allow_nan,
        default=json_default,
    )


def content_hash(value: Any, *, length: int | None = None) -> str:
    """SHA-256 hex of ``value``'s canonical JSON (a str is hashed as its own text)."""
    text = value if isinstance(value, str) else canonical_json(value)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return digest[:length] if length else digest
