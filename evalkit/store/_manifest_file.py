"""A run's manifest file: its name, and its lenient reading where many are read at once
(a catalog or a listing skips a corrupt one with a warning rather than failing)."""

from __future__ import annotations

import json
import logging
from typing import Any, Final

__all__ = ["MANIFEST_NAME", "parse_listed_manifest"]

MANIFEST_NAME: Final = "manifest.json"

logger = logging.getLogger("evalkit.store")


def parse_listed_manifest(raw: bytes, where: object, reader: str) -> dict[str, Any] | None:
    """The manifest in ``raw``, or None (with a warning naming ``reader`` and ``where``) when
    it is not a JSON object."""
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.warning("%s: skipping %s: corrupt run manifest: %s", reader, where, exc)
        return None
    return manifest if isinstance(manifest, dict) else None
