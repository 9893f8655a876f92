"""Run folders: a manifest, an append-only journal, parquet tables, and DataFrame loaders.

A run lives in ``<store>/<run_id>/``::

    manifest.json          who/what/when: identity hash, versions, redacted config, grid, counts
    journal.jsonl          one JSON line per finished conversation (record + turns), fsync'd
    conversations.parquet  one row per conversation  } written by finalize() from the journal,
    turns.parquet          one row per turn          } atomically (temp file + rename)
    grades/*.parquet       one row per conversation x rule (written by evalkit.grading)

Readers: ``load_run(run_id).conversations``, ``.conversations_wide()`` (a column per variable
and per persona tag), ``.turns``, ``.grades()``, ``list_runs()``, ``load_runs(store="runs")``
(every run stacked, e.g. for nightly history; :func:`expand_variables` widens it too).
"""

from __future__ import annotations

from .._util import publish
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
from ._listing import list_runs, load_runs
from ._manifest import identity_hash, read_stored_manifest
from ._reader import Run, load_run
from ._records import (
    STATUSES,
    ConversationRecord,
    TurnRecord,
    dump_tags,
    dump_variables,
    transcript_hash,
)
from ._tables import CONVERSATIONS_SCHEMA, GRADES_SCHEMA, TURNS_SCHEMA
from ._wide import expand_variables
from ._writer import RunWriter, finalize_run

__all__ = [
    "CONVERSATIONS_SCHEMA",
    "GRADES_SCHEMA",
    "STATUSES",
    "TURNS_SCHEMA",
    "ConversationRecord",
    "CorruptRunError",
    "IdentityMismatchError",
    "Run",
    "RunExistsError",
    "RunLockedError",
    "RunNotFoundError",
    "RunWriter",
    "StoreError",
    "TurnRecord",
    "dump_tags",
    "dump_variables",
    "expand_variables",
    "finalize_run",
    "grades_frame",
    "grades_metadata",
    "grades_path",
    "identity_hash",
    "list_runs",
    "load_run",
    "load_runs",
    "read_stored_manifest",
    "storage_error",
    "storage_errors",
    "transcript_hash",
    "write_grades",
]

publish(globals())
