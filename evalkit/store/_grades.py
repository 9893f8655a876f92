"""Grades files: ``<run>/grades/<rubric version id>.parquet``, one per scorecard version,
written atomically by :mod:`evalkit.grading` and read by :meth:`Run.grades`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ._errors import CorruptRunError
from ._layout import GRADES_DIR
from ._location import StoreLocation
from ._tables import GRADES_SCHEMA, table_metadata, to_frame, write_parquet_atomic
from ._urls import StoreLike, as_location

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["grades_frame", "grades_metadata", "grades_path", "write_grades"]


def grades_frame(columns: dict[str, Any], n_rows: int) -> pd.DataFrame:
    """A frame with exactly ``GRADES_SCHEMA``'s columns and dtypes from flat arrays (missing
    columns are null; float arrays holding NaN become nullable integers where needed)."""
    arrays = []
    for field in GRADES_SCHEMA:
        value = columns.get(field.name)
        if value is None:
            arrays.append(pa.nulls(n_rows, field.type))
            continue
        array = value if isinstance(value, pa.Array) else pa.array(value, from_pandas=True)
        arrays.append(array if array.type == field.type else array.cast(field.type))
    table = pa.Table.from_arrays(arrays, schema=GRADES_SCHEMA)
    return to_frame(table, GRADES_SCHEMA)


def grades_path(run_path: StoreLike, rubric_version_id: str) -> StoreLocation:
    """``<run>/grades/<rubric version id, filename-safe>.parquet``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in rubric_version_id)
    return as_location(run_path) / GRADES_DIR / f"{safe.lstrip('.') or '_'}.parquet"


def write_grades(frame: pd.DataFrame, path: StoreLike, metadata: dict[str, str]) -> None:
    """Write the grades atomically (temp file + rename), replacing an older file."""
    table = pa.Table.from_pandas(frame, schema=GRADES_SCHEMA, preserve_index=False)
    write_parquet_atomic(table, path, metadata)


def grades_metadata(path: StoreLike) -> dict[str, str]:
    """The ``evalkit.*`` metadata of a grades file (its footer only: cheap)."""
    try:
        return table_metadata(path)
    except (OSError, pa.ArrowException) as exc:
        raise CorruptRunError(f"cannot read {path}: {exc}", path) from exc
