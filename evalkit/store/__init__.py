"""Run folders: a manifest, an append-only journal, parquet tables, and DataFrame loaders.

A run lives in ``<store>/<run_id>/``::

    manifest.json          who/what/when: identity hash, versions, redacted config, grid, counts
    journal.jsonl          one JSON line per finished conversation (record + turns), fsync'd
    conversations.parquet  one row per conversation  } written by finalize() from the journal,
    turns.parquet          one row per turn          } atomically (temp file + rename)
    grades/*.parquet       one row per conversation x rule (written by evalkit.grading)
    labels/*.jsonl         hand labels, append-only, one object per batch (never in grades)

Readers: ``load_run(run_id).conversations``, ``.conversations_wide()`` (a column per variable
and per persona tag), ``.turns``, ``.grades()``, ``list_runs()``, ``load_runs(store="runs")``
(every run stacked, e.g. for nightly history; :func:`expand_variables` widens it too).

A store is a local folder or an fsspec URL (``s3://bucket/prefix``, ``gs://``, ``az://``,
``memory://``; :func:`open_store` adds ``storage_options``), opened as a :class:`StoreLocation`:
one storage protocol (read, atomic replace, conditional create, list, the run's journal) with
two implementations, :class:`LocalPath` and :class:`RemotePath`. At a URL the journal is
``journal/<epoch>-<seq>.jsonl``, one object per group commit, and ``writers/`` numbers the
writers that opened the run (one at a time). :func:`catalog` lists a store's runs from their
manifests; :func:`sql` runs DuckDB over the views ``runs``, ``conversations``, ``turns`` and
``grades`` of every run.
"""

from __future__ import annotations

from .._util import publish
from ._catalog import CATALOG_COLUMNS, catalog, grid_identity, record_grades_summary
from ._errors import (
    CorruptRunError,
    IdentityMismatchError,
    RunExistsError,
    RunLockedError,
    RunNotFoundError,
    StoreError,
    storage_error,
    storage_errors,
)
from ._grades import grades_frame, grades_metadata, grades_path, write_grades
from ._labels import LABEL_COLUMNS, LABEL_VALUES, Label, add_labels, read_labels
from ._labels_csv import export_labels, import_labels, labels_table
from ._layout import TableName
from ._listing import RunsInput, list_runs, load_runs, run_rows
from ._local import LocalPath
from ._location import StoreLocation
from ._manifest import identity_hash, read_stored_manifest, record_in_manifest
from ._reader import Run, load_run, local_folder
from ._records import (
    STATUSES,
    ConversationRecord,
    ConversationStatus,
    TurnInput,
    TurnRecord,
    dump_tags,
    dump_variables,
    transcript_hash,
)
from ._remote import RemotePath
from ._sql import VIEWS, sql, store_table
from ._tables import CONVERSATIONS_SCHEMA, GRADES_SCHEMA, TURNS_SCHEMA
from ._unreachable import StoreUnreachableError, is_unreachable, unreachable_store
from ._urls import STORE_BACKENDS, StoreLike, UnsupportedStoreError, is_store_url, open_store
from ._wide import expand_variables
from ._writer import RunWriter, finalize_run

__all__ = [
    "CATALOG_COLUMNS",
    "CONVERSATIONS_SCHEMA",
    "GRADES_SCHEMA",
    "LABEL_COLUMNS",
    "LABEL_VALUES",
    "STATUSES",
    "STORE_BACKENDS",
    "TURNS_SCHEMA",
    "VIEWS",
    "ConversationRecord",
    "ConversationStatus",
    "CorruptRunError",
    "IdentityMismatchError",
    "Label",
    "LocalPath",
    "RemotePath",
    "Run",
    "RunExistsError",
    "RunLockedError",
    "RunNotFoundError",
    "RunWriter",
    "RunsInput",
    "StoreError",
    "StoreLike",
    "StoreLocation",
    "StoreUnreachableError",
    "TableName",
    "TurnInput",
    "TurnRecord",
    "UnsupportedStoreError",
    "add_labels",
    "catalog",
    "dump_tags",
    "dump_variables",
    "expand_variables",
    "export_labels",
    "finalize_run",
    "grades_frame",
    "grades_metadata",
    "grades_path",
    "grid_identity",
    "identity_hash",
    "import_labels",
    "is_store_url",
    "is_unreachable",
    "labels_table",
    "list_runs",
    "load_run",
    "load_runs",
    "local_folder",
    "open_store",
    "read_labels",
    "read_stored_manifest",
    "record_grades_summary",
    "record_in_manifest",
    "run_rows",
    "sql",
    "storage_error",
    "storage_errors",
    "store_table",
    "transcript_hash",
    "unreachable_store",
    "write_grades",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._journal import JOURNAL_NAME as JOURNAL_NAME
from ._labels import LABELS_DIR as LABELS_DIR
from ._labels import default_labeller as default_labeller

_SIBLING_API = (
    "JOURNAL_NAME",
    "LABELS_DIR",
    "default_labeller",
)

publish(globals())
