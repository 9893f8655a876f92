"""Run manifests: the identity hash, secret scrubbing, and atomic ``manifest.json`` I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._util import atomic_write_bytes, content_hash, json_default, redact
from ._errors import CorruptRunError, RunNotFoundError, StoreError, storage_errors

__all__ = [
    "MANIFEST_NAME",
    "identity_hash",
    "read_manifest",
    "read_stored_manifest",
    "scrub_secrets",
    "write_manifest",
]

MANIFEST_NAME = "manifest.json"


def identity_hash(definition: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of a run definition.

    Put in only what defines the results (assistant, target, grid, config version...), never
    runtime knobs such as concurrency or retries: resuming with another concurrency must match.
    Types matter (``1`` and ``1.0`` differ); key order does not.
    """
    return content_hash(dict(definition))


def scrub_secrets(value: Any) -> Any:
    """A copy of ``value`` with every secret masked (the one redactor, :func:`evalkit._util.redact`)."""
    return redact(value)


def write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    """Atomically write ``manifest`` (already scrubbed) as indented JSON."""
    try:
        text = json.dumps(
            manifest, indent=2, ensure_ascii=False, allow_nan=False, default=json_default
        )
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot write {path}: the manifest is not JSON ({exc})", path) from exc
    with storage_errors(path, "write"):
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


def read_stored_manifest(run_folder: Path) -> dict[str, Any] | None:
    """A run folder's manifest, or None when it is missing or unreadable."""
    try:
        return read_manifest(Path(run_folder) / MANIFEST_NAME)
    except StoreError:
        return None
