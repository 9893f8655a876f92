"""Run manifests: the identity hash, secret scrubbing, and atomic ``manifest.json`` I/O."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

from ._atomic import atomic_write_bytes
from ._store_errors import CorruptRunError, RunNotFoundError, StoreError
from .api._exceptions import redact_secrets

__all__ = ["MANIFEST_NAME", "identity_hash", "read_manifest", "scrub_secrets", "write_manifest"]

MANIFEST_NAME = "manifest.json"

# Keys whose string values are credentials wherever they appear (compared without case, _ or -).
_SECRET_KEYS = frozenset({"apikey", "authorization", "password", "secret", "clientsecret"})
_MASK = "…"


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value)
    to_json = getattr(value, "model_dump", None)  # pydantic models
    if callable(to_json):
        return to_json(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, real Unicode: the same value always gives the same text."""
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


def identity_hash(definition: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a run definition.

    Put in only what defines the results (assistant, target, grid, config version...), never
    runtime knobs such as concurrency or retries: resuming with another concurrency must match.
    Types matter (``1`` and ``1.0`` differ); key order does not.
    """
    return hashlib.sha256(canonical_json(dict(definition)).encode("utf-8")).hexdigest()


def _mask(value: str) -> str:
    if not value or value.startswith((_MASK, "*")):
        return value  # empty or already redacted
    return _MASK + value[-4:] if len(value) > 8 else _MASK


def scrub_secrets(value: Any, *, key: str | None = None) -> Any:
    """A copy of ``value`` with every ``sk_api_...`` string and every credential value masked.

    Strings anywhere go through ``redact_secrets``; values under keys such as ``apiKey`` or
    ``api_key`` keep only their last 4 characters (DESIGN.md "Reliability and security").
    """
    to_json = getattr(value, "model_dump", None)  # pydantic models
    if callable(to_json) and not isinstance(value, type):
        value = to_json(mode="json", by_alias=True)
    if isinstance(value, Mapping):
        return {redact_secrets(str(k)): scrub_secrets(v, key=str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [scrub_secrets(v) for v in value]
    if isinstance(value, str):
        text = redact_secrets(value)
        if key is not None and key.replace("_", "").replace("-", "").lower() in _SECRET_KEYS:
            text = _mask(text)
        return text
    return value


def write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    """Atomically write ``manifest`` (already scrubbed) as indented JSON."""
    try:
        text = json.dumps(
            manifest, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default
        )
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot write {path}: the manifest is not JSON ({exc})", path) from exc
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def read_manifest(path: Path) -> dict[str, Any]:
    """Read ``manifest.json``; errors name the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RunNotFoundError(f"no run manifest at {path}", path) from None
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptRunError(f"corrupt run manifest {path}: {exc}", path) from exc
    if not isinstance(manifest, dict):
        raise CorruptRunError(f"corrupt run manifest {path}: not a JSON object", path)
    return manifest
