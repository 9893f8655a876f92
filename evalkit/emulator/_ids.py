"""Identifiers, timestamps, key masks and seed derivation used across the emulator."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

from .._util import canonical_json as _canonical_json
from .._util import mask
from ..api import API_KEY_PREFIX


def new_id() -> str:
    """A fresh UUID string (ids are opaque; uniqueness, not randomness quality, matters)."""
    return str(uuid.uuid4())


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with milliseconds and a `Z` suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_api_key() -> str:
    """A fresh project API key with the service's `sk_api_` prefix."""
    return API_KEY_PREFIX + secrets.token_urlsafe(24).replace("-", "x").replace("_", "y")


def key_hash(api_key: str) -> str:
    """What the emulator stores instead of a key: its SHA-256 hex digest."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


def mask_key(api_key: str) -> str:
    """The identity shown in `createdBy`/`updatedBy`: the prefix and the last 4 characters."""
    return API_KEY_PREFIX + mask(api_key.removeprefix(API_KEY_PREFIX).rjust(9, "x"))


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys (evalkit's one canonical form, NaN allowed)."""
    return _canonical_json(value, allow_nan=True)


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts (stable across processes, unlike ``hash``)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1
