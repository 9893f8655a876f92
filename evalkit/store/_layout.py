"""A run folder's layout: file names, table schemas, and small shared helpers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from ._records import (
    STATUSES,
)
from ._tables import (
    CONVERSATIONS_SCHEMA,
    GRADES_SCHEMA,
    TURNS_SCHEMA,
)

PathLike: TypeAlias = str | os.PathLike[str]
TableName: TypeAlias = Literal["conversations", "turns", "grades"]

MANIFEST_FORMAT: Final = "evalkit.run/1"
CONVERSATIONS_FILE: Final = "conversations.parquet"
TURNS_FILE: Final = "turns.parquet"
GRADES_DIR: Final = "grades"
STAMP_KEY: Final = "evalkit.journal_bytes"
SCHEMAS: Final = {
    "conversations": CONVERSATIONS_SCHEMA,
    "turns": TURNS_SCHEMA,
    "grades": GRADES_SCHEMA,
}


def check_run_id(run_id: str) -> str:
    if (
        not isinstance(run_id, str)
        or not run_id
        or len(run_id) > 200
        or run_id.startswith(".")
        or any(ch in run_id for ch in "/\\:")
        or any(ord(ch) < 32 for ch in run_id)
    ):
        raise ValueError(
            f"run_id {run_id!r} cannot name a folder: use 1-200 characters without '/', "
            "'\\', ':' or control characters, not starting with '.'"
        )
    return run_id


def requested_identity(manifest: Mapping[str, Any], run_id: str) -> str:
    identity = manifest.get("identity")
    if not isinstance(identity, str) or not identity:
        raise ValueError(
            f"the manifest for run {run_id!r} needs an 'identity' string (see identity_hash)"
        )
    given = manifest.get("run_id")
    if given is not None and given != run_id:
        raise ValueError(f"manifest['run_id'] is {given!r} but the run_id is {run_id!r}")
    return identity


def count_statuses(conversations: pa.Table) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for item in pc.value_counts(conversations.column("status")).to_pylist():
        counts[item["values"]] = item["counts"]
    return {"total": conversations.num_rows, **counts}
