"""The catalog's index at a URL: ``<store>/.catalog/<run_id>.json``, a copy of each run's
manifest, and ``<store>/.catalog/~snapshot.json``, every copy at once.

An object store answers one request per object, so a catalog of a thousand runs read from
their manifests costs a thousand GETs (seconds of client CPU alone). Instead, every manifest
written at a URL is copied to ``.catalog/`` right after it; one listing of ``.catalog/`` gives
each copy's ETag (a digest of its bytes); the snapshot holds the copies as the last catalog
saw them, keyed by ETag. A catalog then costs two listings and one GET, plus one GET per run
whose manifest changed since (after which it rewrites the snapshot, best effort: a read-only
reader still gets its catalog). The listings and the snapshot are requested at once. A run without a copy (written before the index, or by a
process killed between its manifest and the copy) is read from its manifest; a copy is at
most one manifest write behind its manifest, and only in that killed-between window.
Backends whose listings carry no ETag (``memory://``) read the manifests themselves.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from ._manifest_file import MANIFEST_NAME, parse_listed_manifest

if TYPE_CHECKING:
    from ._remote import RemotePath

__all__ = ["INDEX_DIR", "SNAPSHOT_NAME", "copy_to_index", "indexed_manifests"]

logger = logging.getLogger("evalkit.store")

INDEX_DIR: Final = ".catalog"
SNAPSHOT_NAME: Final = "~snapshot.json"
_SNAPSHOT_FORMAT: Final = 1


def _copy_path(manifest_path: RemotePath) -> RemotePath:
    run = manifest_path.parent
    return run.parent / INDEX_DIR / f"{run.name}.json"


def copy_to_index(manifest_path: RemotePath, data: bytes) -> None:
    """Copy a manifest just written at a URL into the store's ``.catalog/`` (one PUT)."""
    if manifest_path.name != MANIFEST_NAME:
        return
    _copy_path(manifest_path).write_bytes(data)


def _etag(entry: dict[str, Any]) -> str | None:
    tag = entry.get("ETag") or entry.get("etag") or entry.get("md5Hash")
    return str(tag).strip('"') if tag else None


def _snapshot(index: RemotePath) -> dict[str, Any]:
    try:
        raw = json.loads((index / SNAPSHOT_NAME).read_bytes())
    except (FileNotFoundError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    except OSError as exc:
        logger.debug("catalog: cannot read the snapshot of %s: %s", index, exc)
        return {}
    if not isinstance(raw, dict) or raw.get("format") != _SNAPSHOT_FORMAT:
        return {}
    runs = raw.get("runs")
    return runs if isinstance(runs, dict) else {}


def _save(index: RemotePath, runs: dict[str, Any]) -> None:
    data = json.dumps({"format": _SNAPSHOT_FORMAT, "runs": runs}, ensure_ascii=False).encode()
    try:
        (index / SNAPSHOT_NAME).write_bytes(data)
    except OSError as exc:  # a read-only reader: the next catalog fetches the copies again
        logger.debug("catalog: cannot save the snapshot of %s: %s", index, exc)


def indexed_manifests(root: RemotePath) -> list[tuple[RemotePath, dict[str, Any]]] | None:
    """(run folder, manifest) for every run under ``root``, in name order, through the index;
    None when the backend's listings carry no ETag (read the manifests instead)."""
    index = root / INDEX_DIR
    with ThreadPoolExecutor(3, thread_name_prefix="evalkit-catalog") as pool:  # three requests
        folders = pool.submit(lambda: [c.name for c in root.iterdir()])
        listed = pool.submit(index.listing)
        snapshot = pool.submit(_snapshot, index)
        runs = sorted(name for name in folders.result() if not name.startswith("."))
        entries = listed.result()
        known_then = snapshot.result()
    if any(_etag(e) is None for e in entries if e.get("type") == "file"):
        return None
    tags = {
        str(e["name"]).rstrip("/").rsplit("/", 1)[-1].removesuffix(".json"): _etag(e)
        for e in entries
        if e.get("type") == "file" and not str(e["name"]).endswith(SNAPSHOT_NAME)
    }
    if not tags and runs:
        return None  # a store written before the index: nothing to gain
    known = known_then if tags else {}
    found: dict[str, dict[str, Any]] = {}
    wanted: dict[RemotePath, str] = {}
    for run in runs:
        cached = known.get(run)
        if run in tags and isinstance(cached, dict) and cached.get("etag") == tags[run]:
            found[run] = cached["manifest"]
        else:
            wanted[index / f"{run}.json" if run in tags else root / run / MANIFEST_NAME] = run
    fetched = root.read_many(list(wanted))
    changed = False
    for path, run in wanted.items():
        raw = fetched.get(path)
        if raw is None:
            continue
        manifest = parse_listed_manifest(raw, path, "catalog")
        if manifest is not None:
            found[run] = manifest
            changed |= run in tags
    if changed or set(known) - set(runs):
        _save(index, {r: {"etag": tags[r], "manifest": found[r]} for r in found if r in tags})
    return [(root / run, found[run]) for run in runs if run in found]
