"""Run manifests: the identity hash, secret scrubbing, and atomic ``manifest.json`` I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._util import content_hash, json_default, redact
from ._errors import CorruptRunError, RunNotFoundError, StoreError, storage_errors
from ._location import StoreLocation
from ._manifest_file import MANIFEST_NAME
from ._urls import StoreLike, open_store

__all__ = [
    "MANIFEST_NAME",
    "create_manifest",
    "identity_hash",
    "read_manifest",
    "read_stored_manifest",
    "record_in_manifest",
    "scrub_secrets",
    "write_manifest",
]


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


def _manifest_bytes(path: StoreLocation, manifest: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(
            manifest, indent=2, ensure_ascii=False, allow_nan=False, default=json_default
        )
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot write {path}: the manifest is not JSON ({exc})", path) from exc
    return (text + "\n").encode("utf-8")


def write_manifest(path: StoreLike, manifest: Mapping[str, Any]) -> None:
    """Atomically write ``manifest`` (already scrubbed) as indented JSON (at a URL: one PUT)."""
    path = open_store(path)
    data = _manifest_bytes(path, manifest)
    with storage_errors(path, "write"):
        path.replace_bytes(data)
        path.index_manifest(data)


def create_manifest(path: StoreLike, manifest: Mapping[str, Any]) -> None:
    """Create ``manifest`` only if none is there (a conditional create):
    :class:`FileExistsError` when another writer created the run first."""
    path = open_store(path)
    data = _manifest_bytes(path, manifest)
    try:
        path.create_bytes(data)
    except FileExistsError:
        raise
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc}", path) from exc
    with storage_errors(path, "write"):
        path.index_manifest(data)


def read_manifest(path: StoreLike) -> dict[str, Any]:
    """Read ``manifest.json``; errors name the file."""
    path = open_store(path)
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


def read_stored_manifest(run_folder: StoreLike) -> dict[str, Any] | None:
    """A run folder's manifest, or None when it is missing or unreadable."""
    try:
        return read_manifest(open_store(run_folder) / MANIFEST_NAME)
    except StoreError:
        return None


def record_in_manifest(run_folder: StoreLike, key: str, value: Any) -> dict[str, Any]:
    """Set ``key`` in a finished run's manifest (what a later step learned of the run, such
    as a sequential comparison's looks); returns the manifest written. Call it only when no
    writer has the run open: a writer's finalize writes its own manifest."""
    folder = open_store(run_folder)
    manifest = read_manifest(folder / MANIFEST_NAME)
    manifest[key] = scrub_secrets(value)
    write_manifest(folder / MANIFEST_NAME, manifest)
    return manifest
