"""Arrow schemas of a run's tables, parquet I/O, and Arrow -> pandas with stable dtypes.

pandas 3 turns Arrow strings into its new ``str`` dtype by default and nullable integers into
floats; here every column gets an explicit dtype so a round trip is exact and an empty table has
the same dtypes as a full one:

=====================  ==========================================
Arrow                  pandas
=====================  ==========================================
large_string           ``str`` (pyarrow-backed, missing = NaN)
int64, not nullable    ``int64``
int64, nullable        ``Int64``
float64                ``float64`` (missing = NaN)
timestamp[us, UTC]     ``datetime64[us, UTC]``
=====================  ==========================================
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from ._errors import CorruptRunError, storage_errors
from ._location import StoreLocation
from ._schemas import CONVERSATIONS_SCHEMA, GRADES_SCHEMA, TURNS_SCHEMA
from ._urls import StoreLike, as_location

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONVERSATIONS_SCHEMA",
    "GRADES_SCHEMA",
    "TURNS_SCHEMA",
    "empty_frame",
    "read_parquet_table",
    "string_dtype",
    "table_metadata",
    "to_frame",
    "write_parquet_atomic",
]


@functools.cache
def string_dtype() -> Any:
    """pandas' default string dtype (``str`` in pandas 3), pinned to pyarrow storage (built on
    first use: importing the store does not import pandas)."""
    import numpy as np
    import pandas as pd

    try:
        return pd.StringDtype("pyarrow", na_value=np.nan)
    except TypeError:  # pandas 2.2
        return pd.StringDtype("pyarrow_numpy")


_STRING_TYPES = (pa.string(), pa.large_string(), pa.string_view())


def _types_mapper(type_: pa.DataType) -> Any:
    return string_dtype() if type_ in _STRING_TYPES else None


def conform(table: pa.Table, schema: pa.Schema, source: StoreLocation | str) -> pa.Table:
    """``table`` with ``schema``'s columns first, in order and type; extra columns kept after.

    A missing nullable column (a run stored by an older evalkit) becomes all-null; a missing
    required one is an error. The table's metadata is kept.
    """
    if table.schema.equals(schema, check_metadata=False):
        return table
    columns: list[Any] = []
    fields: list[pa.Field] = []
    for field in schema:
        if field.name in table.column_names:
            column = table.column(field.name)
            if column.type != field.type:
                try:
                    column = column.cast(field.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise CorruptRunError(
                        f"{source}: column {field.name!r} is {column.type}, expected {field.type}",
                        source,
                    ) from exc
        elif field.nullable:
            column = pa.nulls(table.num_rows, field.type)
        else:
            raise CorruptRunError(f"{source}: required column {field.name!r} is missing", source)
        columns.append(column)
        fields.append(field)
    for name in table.column_names:
        if name not in schema.names:
            columns.append(table.column(name))
            fields.append(table.schema.field(name))
    # keep the footer's metadata: the journal stamp tells a fresh table from a stale one
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))


def to_frame(table: pa.Table, schema: pa.Schema) -> pd.DataFrame:
    """Convert a conformed table to pandas with the dtypes in this module's docstring."""
    frame: pd.DataFrame = table.to_pandas(types_mapper=_types_mapper, split_blocks=True)
    for field in schema:
        if field.nullable and pa.types.is_integer(field.type):
            frame[field.name] = frame[field.name].astype("Int64")
    return frame


def empty_frame(schema: pa.Schema) -> pd.DataFrame:
    """A frame with no rows and exactly the dtypes :func:`to_frame` gives."""
    return to_frame(schema.empty_table(), schema)


def write_parquet_atomic(
    table: pa.Table, path: StoreLike, metadata: Mapping[str, str] | None = None
) -> None:
    """Write ``table`` to ``path`` via a temp file and a rename (at a URL: one PUT, which is
    atomic for readers too); ``metadata`` goes in the schema."""
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in metadata.items()})
        table = table.replace_schema_metadata(merged)
    path = as_location(path)
    with storage_errors(path, "write"):  # pyarrow's errors are OSError too
        path.replace_with(lambda sink: pq.write_table(table, sink, compression="snappy"))


def table_metadata(path: StoreLike) -> dict[str, str]:
    """The string metadata :func:`write_parquet_atomic` stored (reads only the footer)."""
    with as_location(path).open_input() as handle:
        raw = pq.read_schema(handle).metadata or {}
    return {
        k.decode(): v.decode("utf-8", "replace")
        for k, v in raw.items()
        if k.startswith(b"evalkit.")
    }


def read_parquet_table(path: StoreLike, schema: pa.Schema) -> pa.Table:
    """Read a parquet table and conform it to ``schema``; errors name the file."""
    path = as_location(path)
    try:
        table = pq.read_table(path.arrow_source())
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise CorruptRunError(f"cannot read {path}: {exc}", path) from exc
    return conform(table, schema, path)
