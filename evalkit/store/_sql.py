"""SQL over a whole store with DuckDB: views ``runs``, ``conversations``, ``turns``, ``grades``.

The tables are read with pyarrow (through fsspec at a URL: every object fetched concurrently)
and handed to an in-memory DuckDB as Arrow tables, so no DuckDB extension (httpfs...) is ever
installed or loaded. Only the views a query names are read. A finalized run is read from its
parquet tables; a run still being written (or killed) from its journal, as :func:`load_run`
does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

from ._catalog import catalog
from ._errors import CorruptRunError, StoreError
from ._layout import CONVERSATIONS_FILE, GRADES_DIR, SCHEMAS, STAMP_KEY, TURNS_FILE
from ._listing import stored_manifests
from ._location import StoreLocation
from ._manifest import MANIFEST_NAME
from ._reader import Run
from ._tables import GRADES_SCHEMA, conform
from ._urls import StoreLike, open_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["VIEWS", "sql", "store_table"]

#: The views a query can use.
VIEWS: Final = ("runs", "conversations", "turns", "grades")
_FILES: Final = {"conversations": CONVERSATIONS_FILE, "turns": TURNS_FILE}


def _fresh(manifest: Mapping[str, Any], table: pa.Table) -> bool:
    """A finalized run's table is current when it was built from the journal the manifest
    counted (a run resumed after finalize has ``finalized_at`` null again)."""
    if manifest.get("finalized_at") is None:
        return False
    stamp = (table.schema.metadata or {}).get(STAMP_KEY.encode(), b"").decode()
    journal = manifest.get("journal")
    return isinstance(journal, Mapping) and stamp == str(journal.get("bytes"))


def _read(path: StoreLocation, data: bytes | None = None) -> pa.Table:
    try:
        return pq.read_table(pa.BufferReader(data) if data is not None else path.arrow_source())
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise CorruptRunError(f"cannot read {path}: {exc}", path) from exc


def _run_tables(root: StoreLocation, name: str) -> list[pa.Table]:
    schema = SCHEMAS[name]
    if name == "grades":  # no manifest is read: at a URL, one listing finds every file
        files = _grades_files(root)
        data = root.read_ahead(files)
        return [conform(_read(p, data.get(p)), GRADES_SCHEMA, str(p)) for p in files]
    manifests = stored_manifests(root)
    wanted = [folder / _FILES[name] for folder, _ in manifests]
    data = root.read_ahead(wanted)
    tables = []
    for (folder, manifest), path in zip(manifests, wanted, strict=True):
        try:
            table: pa.Table | None = conform(_read(path, data.get(path)), schema, str(path))
        except FileNotFoundError:
            table = None
        if table is not None and not _fresh(manifest, table):
            table = None
        if table is None:  # never finalized, or resumed since: the journal says
            table = Run(folder)._table(name)  # type: ignore[arg-type]
        tables.append(table)
    return tables


def _grades_files(root: StoreLocation) -> list[StoreLocation]:
    """Every run's grades files, in run order: runs are the folders holding a manifest."""
    split = root.files_below(3)  # one recursive listing instead of one per run
    runs = {p[0] for p in split if len(p) == 2 and p[1] == MANIFEST_NAME}
    found: list[StoreLocation] = []
    for parts in sorted(split):
        if (
            len(parts) == 3
            and parts[0] in runs
            and not parts[0].startswith(".")
            and parts[1] == GRADES_DIR
            and parts[2].endswith(".parquet")
            and not parts[2].startswith(".")
        ):
            found.append(root / parts[0] / GRADES_DIR / parts[2])
    return found


def store_table(
    name: str, store: StoreLike = "runs", *, storage_options: Mapping[str, Any] | None = None
) -> pa.Table:
    """Every run's ``conversations``, ``turns`` or ``grades`` as one Arrow table."""
    if name not in SCHEMAS:
        raise ValueError(f"name must be one of {sorted(SCHEMAS)}, not {name!r}")
    root = open_store(store, storage_options)
    tables = _run_tables(root, name)
    schema = SCHEMAS[name]
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(
        [t.select(schema.names).cast(schema) for t in tables], promote_options="default"
    )


def sql(
    query: str,
    store: StoreLike = "runs",
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Run ``query`` (DuckDB SQL) over every run of ``store`` (a folder or an fsspec URL).

    Views: ``runs`` (the :func:`catalog`), ``conversations``, ``turns`` and ``grades`` (the
    run tables' columns, ``run_id`` telling runs apart). Only the views the query names are
    read. Returns a pandas DataFrame. No DuckDB extension is installed or loaded.
    """
    import duckdb

    root = open_store(store, storage_options)
    used = [v for v in VIEWS if re.search(rf"\b{v}\b", query, flags=re.IGNORECASE)]
    con = duckdb.connect(
        ":memory:",
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    registered: dict[str, Any] = {}
    try:
        for view in used:
            data: Any = catalog(root) if view == "runs" else store_table(view, root)
            con.register(view, data)
            registered[view] = data
        try:
            return con.execute(query).df()
        except duckdb.Error as exc:
            raise StoreError(
                f"sql over {root}: {exc}\n{_views_text(root, registered)}", None
            ) from exc
    finally:
        con.close()


def _views_text(root: StoreLocation, registered: Mapping[str, Any]) -> str:
    """The views a query can use, one line each with its columns (what a failed query needs)."""
    import pandas as pd

    lines = ["views and their columns:"]
    for view in VIEWS:
        if view in registered:
            data = registered[view]
            names = list(data.columns) if isinstance(data, pd.DataFrame) else data.column_names
        elif view == "runs":
            names = list(catalog(root).columns)
        else:
            names = SCHEMAS[view].names
        lines.append(f"  {view}: {', '.join(map(str, names))}")
    return "\n".join(lines)
