"""The one place grading touches the store's internal helpers (they are moving packages)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pyarrow as pa

from .._atomic import atomic_write_bytes
from .._tables import to_frame, write_parquet_atomic
from ..store import GRADES_SCHEMA

__all__ = ["check_rubric_hash", "grades_frame", "grades_path", "write_grades"]

logger = logging.getLogger("evalkit.grading")
GRADES_DIR = "grades"
REGISTRY = ".rubrics.json"


def grades_frame(columns: dict[str, Any], n_rows: int) -> pd.DataFrame:
    """A frame with exactly ``GRADES_SCHEMA``'s columns and dtypes from flat arrays (missing
    columns are null; float arrays holding NaN become nullable integers where needed)."""
    arrays = []
    for field in GRADES_SCHEMA:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(n_rows, field.type))
            continue
        array = pa.array(value, from_pandas=True)
        arrays.append(array if array.type == field.type else array.cast(field.type))
    table = pa.Table.from_arrays(arrays, schema=GRADES_SCHEMA)
    return to_frame(table, GRADES_SCHEMA)


def grades_path(run_path: Path, rubric_version_id: str) -> Path:
    """``<run>/grades/<rubric version id, filename-safe>.parquet``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in rubric_version_id)
    return run_path / GRADES_DIR / f"{safe.lstrip('.') or '_'}.parquet"


def write_grades(frame: pd.DataFrame, path: Path, metadata: dict[str, str]) -> None:
    """Write the grades atomically (temp file + rename), replacing an older file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, schema=GRADES_SCHEMA, preserve_index=False)
    write_parquet_atomic(table, path, metadata)


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
