"""The rubric registry: a scorecard version seen before with other rules is warned about."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .._util import atomic_write_bytes

__all__ = ["check_rubric_hash"]

logger = logging.getLogger("evalkit.grading")
REGISTRY = ".rubrics.json"


def check_rubric_hash(folder: Path, rubric_version_id: str, content_hash: str) -> bool:
    """Record the hash of a rubric version in ``folder/.rubrics.json``; warn and return False
    when that version was seen before with other rules."""
    registry = folder / REGISTRY
    known: dict[str, Any] = {}
    if registry.is_file():
        try:
            known = json.loads(registry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            logger.warning("ignoring unreadable rubric registry %s", registry)
    seen = known.get(rubric_version_id)
    if seen == content_hash:
        return True
    if seen is not None:
        logger.warning(
            "rubric version %r was graded before with other rules (hash %s, now %s); the service "
            "freezes a scorecard once a call is graded against it: give changed rules a new "
            "rubricVersionId",
            rubric_version_id,
            str(seen)[:12],
            content_hash[:12],
        )
    known[rubric_version_id] = content_hash
    folder.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(known, indent=1, sort_keys=True).encode("utf-8")
    atomic_write_bytes(registry, payload)
    return seen is None
