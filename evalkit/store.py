"""Run folders: a manifest, an append-only journal, parquet tables, and DataFrame loaders.

A run lives in ``<store>/<run_id>/``::

    manifest.json          who/what/when: identity hash, versions, redacted config, grid, counts
    journal.jsonl          one JSON line per finished conversation (record + turns), fsync'd
    conversations.parquet  one row per conversation  } written by finalize() from the journal,
    turns.parquet          one row per turn          } atomically (temp file + rename)
    grades/*.parquet       one row per conversation x rule (written by evalkit.grading)

The journal is the source of truth. A run killed at any moment keeps every conversation whose
``append`` returned; a torn last line is ignored. If a conversation id appears twice in the
journal (the runner re-ran it), **the last line wins**, so tables never hold duplicates. The
parquet tables record the journal size they were built from; :func:`load_run` rebuilds the
tables from the journal in memory when they are missing or older (a crashed or live run), and
:func:`finalize_run` writes them.

Writers::

    with RunWriter.open("runs", run_id, manifest) as writer:   # create, or resume
        todo = [c for c in planned if c not in writer.finished]
        ...
        writer.append(record, turns)                           # from any thread / coroutine
        run = writer.finalize({"outcome": "complete"})

Readers: ``load_run(run_id).conversations``, ``.turns``, ``.grades()``, ``list_runs()``,
``load_runs("runs")`` (every run stacked, e.g. for nightly history).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, TypeAlias

import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pyarrow as pa
import pyarrow.compute as pc

from . import _version
from ._atomic import fsync_dir, remove_stale_temps
from ._journal import (
    JOURNAL_NAME,
    JournalWriter,
    complete_size,
    encode_line,
    read_journal,
    records_from_table,
)
from ._manifest import MANIFEST_NAME, identity_hash, read_manifest, scrub_secrets, write_manifest
from ._records import (
    STATUSES,
    ConversationRecord,
    TurnInput,
    TurnRecord,
    check_turns,
    dump_variables,
    transcript_hash,
)
from ._store_errors import (
    CorruptRunError,
    IdentityMismatchError,
    RunExistsError,
    RunLockedError,
    RunNotFoundError,
    StoreError,
)
from ._tables import (
    CONVERSATIONS_SCHEMA,
    GRADES_SCHEMA,
    TURNS_SCHEMA,
    empty_frame,
    read_parquet_table,
    to_frame,
    write_parquet_atomic,
)

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
    "dump_variables",
    "finalize_run",
    "identity_hash",
    "list_runs",
    "load_run",
    "load_runs",
    "transcript_hash",
]

logger = logging.getLogger("evalkit.store")

PathLike: TypeAlias = str | os.PathLike[str]
TableName: TypeAlias = Literal["conversations", "turns", "grades"]

MANIFEST_FORMAT: Final = "evalkit.run/1"
CONVERSATIONS_FILE: Final = "conversations.parquet"
TURNS_FILE: Final = "turns.parquet"
GRADES_DIR: Final = "grades"
_STAMP_KEY: Final = "evalkit.journal_bytes"
_SCHEMAS: Final = {
    "conversations": CONVERSATIONS_SCHEMA,
    "turns": TURNS_SCHEMA,
    "grades": GRADES_SCHEMA,
}


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _check_run_id(run_id: str) -> str:
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


def _requested_identity(manifest: Mapping[str, Any], run_id: str) -> str:
    identity = manifest.get("identity")
    if not isinstance(identity, str) or not identity:
        raise ValueError(
            f"the manifest for run {run_id!r} needs an 'identity' string (see identity_hash)"
        )
    given = manifest.get("run_id")
    if given is not None and given != run_id:
        raise ValueError(f"manifest['run_id'] is {given!r} but the run_id is {run_id!r}")
    return identity


class RunWriter:
    """Writes one run folder: manifest, journal appends, and the final tables.

    Make one with :meth:`create` (a new run), :meth:`resume` (an existing one) or :meth:`open`
    (either). One writer per run at a time, across processes (an exclusive file lock); close it
    with :meth:`close`, :meth:`finalize`, or a ``with`` block.
    """

    def __init__(
        self,
        path: Path,
        manifest: dict[str, Any],
        journal: JournalWriter,
        recorded: pa.Table | None = None,
    ) -> None:
        """Internal: use :meth:`create`, :meth:`resume` or :meth:`open`."""
        self.path = path
        self.run_id: str = str(manifest.get("run_id") or path.name)
        self._manifest = manifest
        self._journal = journal
        # conversations recorded before this writer opened: their ids now, records on demand
        self._recorded = recorded
        self._ids: set[str] = (
            set(recorded.column("conversation_id").to_pylist()) if recorded is not None else set()
        )
        self._records: dict[str, ConversationRecord] = {}  # appended by this writer
        self._finished: frozenset[str] | None = None
        self._lock = threading.Lock()
        self._closer = weakref.finalize(self, journal.close)  # never leak the lock

    # ------------------------------------------------------------------ opening

    @classmethod
    def create(
        cls, store: PathLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """Start a new run in ``<store>/<run_id>``.

        Refuses a folder that already holds a run: :class:`IdentityMismatchError` if it was made
        from another definition, :class:`RunExistsError` otherwise (use :meth:`resume`).
        ``fsync=False`` skips the per-conversation fsync (benchmarks, throwaway runs).
        """
        path = Path(store) / _check_run_id(run_id)
        identity = _requested_identity(manifest, run_id)
        cls._refuse_existing(path, identity)
        path.mkdir(parents=True, exist_ok=True)
        journal = JournalWriter(path / JOURNAL_NAME, fsync=fsync)
        try:
            cls._refuse_existing(path, identity)  # another process may have won the race
            if journal.size:
                raise CorruptRunError(
                    f"{path} has a journal but no {MANIFEST_NAME}; restore the manifest or "
                    "delete the folder",
                    path,
                )
            remove_stale_temps(path)
            now = _now()
            stored = {
                "format": MANIFEST_FORMAT,
                "run_id": run_id,
                "identity": identity,
                "created_at": now,
                "evalkit_version": _version.__version__,
                **scrub_secrets(dict(manifest)),
                "finalized_at": None,
            }
            write_manifest(path / MANIFEST_NAME, stored)
            fsync_dir(path.parent)
        except BaseException:
            journal.close()
            raise
        logger.info("run %s: created at %s", run_id, path)
        return cls(path, stored, journal)

    @staticmethod
    def _refuse_existing(path: Path, identity: str) -> None:
        manifest_path = path / MANIFEST_NAME
        if not manifest_path.exists():
            return
        stored = read_manifest(manifest_path).get("identity")
        if stored != identity:
            raise IdentityMismatchError(path, str(stored), identity)
        raise RunExistsError(
            f"{path} already holds run {path.name!r}; use RunWriter.resume or RunWriter.open "
            "to continue it",
            path,
        )

    @classmethod
    def resume(
        cls, store: PathLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """Continue the run in ``<store>/<run_id>``; refuses when the identity hash differs.

        The journal is replayed (a torn last line is cut off), :attr:`finished` lists the
        conversations already recorded, and ``manifest``'s values update the stored manifest
        (``created_at`` is kept; the time is added to ``resumed_at``).
        """
        path = Path(store) / _check_run_id(run_id)
        identity = _requested_identity(manifest, run_id)
        stored = read_manifest(path / MANIFEST_NAME)
        if stored.get("identity") != identity:
            raise IdentityMismatchError(path, str(stored.get("identity")), identity)
        update = {
            **scrub_secrets(dict(manifest)),
            "created_at": stored.get("created_at"),
            "resumed_at": [*stored.get("resumed_at", []), _now()],
            "finalized_at": None,
        }
        return cls._attach(path, update, fsync=fsync)

    @classmethod
    def open(
        cls, store: PathLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """:meth:`resume` the run if ``<store>/<run_id>`` holds one, else :meth:`create` it."""
        if (Path(store) / _check_run_id(run_id) / MANIFEST_NAME).exists():
            return cls.resume(store, run_id, manifest, fsync=fsync)
        return cls.create(store, run_id, manifest, fsync=fsync)

    @classmethod
    def _attach(
        cls, path: Path, update: Mapping[str, Any] | None, *, fsync: bool = True
    ) -> RunWriter:
        journal = JournalWriter(path / JOURNAL_NAME, fsync=fsync)
        try:
            stored = read_manifest(path / MANIFEST_NAME)
            recorded = read_journal(path / JOURNAL_NAME, with_turns=False).conversations
            remove_stale_temps(path)
            if update is not None:
                stored.update(update)
                write_manifest(path / MANIFEST_NAME, stored)
        except BaseException:
            journal.close()
            raise
        logger.info(
            "run %s: resumed with %d conversation(s) recorded", path.name, recorded.num_rows
        )
        return cls(path, stored, journal, recorded)

    # ------------------------------------------------------------------ state

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest as stored."""
        with self._lock:
            return dict(self._manifest)

    @property
    def finished(self) -> frozenset[str]:
        """Ids of the conversations in the journal (all four statuses are final)."""
        with self._lock:
            if self._finished is None:
                self._finished = frozenset(self._ids)
            return self._finished

    def records(self) -> dict[str, ConversationRecord]:
        """The recorded conversations by id (the runner decides which, if any, to re-run)."""
        with self._lock:
            if self._recorded is not None:  # built once, on first use
                self._records = {**records_from_table(self._recorded), **self._records}
                self._recorded = None
            return dict(self._records)

    def __contains__(self, conversation_id: object) -> bool:
        with self._lock:
            return conversation_id in self._ids

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    @property
    def closed(self) -> bool:
        return self._journal.closed

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<RunWriter {self.run_id!r} at {str(self.path)!r}, {len(self)} recorded, {state}>"

    # ------------------------------------------------------------------ writing

    def append(self, record: ConversationRecord, turns: Sequence[TurnInput]) -> None:
        """Record one finished conversation; durable when this returns.

        Thread-safe, and fine to call from a coroutine (one short write + fsync; see
        :meth:`aappend` for slow disks). Appending an id already recorded replaces it (the last
        line wins; do not append one id from two threads at once). ``ValueError`` names the
        field when the record breaks the table contract (``n_turns`` must equal ``len(turns)``).
        """
        record.check()
        if record.run_id != self.run_id:
            raise ValueError(
                f"conversation {record.conversation_id!r} has run_id {record.run_id!r}, "
                f"but this writer writes run {self.run_id!r}"
            )
        line = encode_line(record, check_turns(record, turns))
        self._journal.append(line)
        with self._lock:
            self._records[record.conversation_id] = record
            self._ids.add(record.conversation_id)
            self._finished = None

    async def aappend(self, record: ConversationRecord, turns: Sequence[TurnInput]) -> None:
        """:meth:`append` in a worker thread, so a slow fsync never blocks the event loop.

        Concurrent calls share fsyncs. If the awaiting task is cancelled the append still
        completes (the conversation is recorded, and skipped on resume).
        """
        await asyncio.to_thread(self.append, record, turns)

    def finalize(
        self, extra_manifest: Mapping[str, Any] | None = None, *, close: bool = True
    ) -> Run:
        """Write the parquet tables from the journal and the manifest's counts; return the Run.

        ``extra_manifest`` values (scrubbed of secrets) are merged into the manifest. The writer
        is closed afterwards unless ``close=False``.
        """
        if self.closed:
            raise StoreError(f"the writer of {self.path} is closed", self.path)
        self._journal.sync()
        contents = read_journal(self.path / JOURNAL_NAME)
        stamp = {_STAMP_KEY: str(contents.journal_bytes), "evalkit.run_id": self.run_id}
        write_parquet_atomic(contents.turns, self.path / TURNS_FILE, stamp)
        write_parquet_atomic(contents.conversations, self.path / CONVERSATIONS_FILE, stamp)
        with self._lock:
            self._manifest.update(scrub_secrets(dict(extra_manifest or {})))
            self._manifest.update(
                {
                    "counts": _counts(contents.conversations),
                    "n_turns": contents.turns.num_rows,
                    "journal": {
                        "bytes": contents.journal_bytes,
                        "lines": contents.lines,
                        "superseded": contents.superseded,
                    },
                    "finalized_at": _now(),
                }
            )
            write_manifest(self.path / MANIFEST_NAME, self._manifest)
        logger.info(
            "run %s: finalized %d conversation(s), %d turn(s)",
            self.run_id,
            contents.conversations.num_rows,
            contents.turns.num_rows,
        )
        if close:
            self.close()
        return Run(self.path)

    def close(self) -> None:
        """fsync and close the journal, releasing the run. Idempotent."""
        self._closer()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _counts(conversations: pa.Table) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for item in pc.value_counts(conversations.column("status")).to_pylist():
        counts[item["values"]] = item["counts"]
    return {"total": conversations.num_rows, **counts}


# ---------------------------------------------------------------------- reading


class Run:
    """A stored run: :attr:`manifest`, and lazily loaded, cached DataFrames.

    ``conversations`` and ``turns`` come from the parquet tables, or from the journal when the
    tables are missing or older than it (a crashed or still running run); both always come
    from the same source. The frames are cached: reuse them, copy before changing them.
    """

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self.manifest: dict[str, Any] = read_manifest(self.path / MANIFEST_NAME)
        self.run_id: str = str(self.manifest.get("run_id") or self.path.name)
        self._frames: dict[str, pd.DataFrame] = {}
        self._pending: dict[str, pa.Table] = {}
        self._stamp: str | None = None
        self._from_journal = False

    def __repr__(self) -> str:
        total = (self.manifest.get("counts") or {}).get("total", "?")
        return f"<Run {self.run_id!r} at {str(self.path)!r}: {total} conversation(s)>"

    @property
    def conversations(self) -> pd.DataFrame:
        """One row per conversation (columns and dtypes: ``CONVERSATIONS_SCHEMA``)."""
        return self._frame("conversations")

    @property
    def turns(self) -> pd.DataFrame:
        """One row per turn: run_id, conversation_id, index (1-based), role, text."""
        return self._frame("turns")

    @property
    def counts(self) -> dict[str, int]:
        """Conversations by status, plus ``total`` (from the loaded conversations)."""
        status = self.conversations["status"].value_counts()
        return {"total": len(self.conversations), **{s: int(status.get(s, 0)) for s in STATUSES}}

    @property
    def from_journal(self) -> bool:
        """True when the frames come from the journal (tables missing or stale); loads them."""
        self._frame("conversations")
        return self._from_journal

    def _frame(self, name: Literal["conversations", "turns"]) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            table = self._pending.pop(name, None)
            if table is None:
                table = self._table(name)
            frame = to_frame(table, _SCHEMAS[name])
            self._frames[name] = frame
        return frame

    def _table(self, name: Literal["conversations", "turns"]) -> pa.Table:
        if self._from_journal:
            return self._replay(name)
        journal = self.path / JOURNAL_NAME
        parquet = self.path / (CONVERSATIONS_FILE if name == "conversations" else TURNS_FILE)
        if not parquet.exists():
            return self._replay(name) if journal.exists() else _SCHEMAS[name].empty_table()
        table = read_parquet_table(parquet, _SCHEMAS[name])
        stamp = (table.schema.metadata or {}).get(_STAMP_KEY.encode(), b"").decode() or None
        expected = self._stamp
        if expected is None and journal.exists():
            expected = str(complete_size(journal))  # tables are fresh if built from all of it
        if expected is not None and stamp != expected:
            return self._replay(name)
        self._stamp = stamp
        return table

    def _replay(self, name: Literal["conversations", "turns"]) -> pa.Table:
        logger.info(
            "run %s: tables missing or older than the journal; reading the journal", self.run_id
        )
        contents = read_journal(self.path / JOURNAL_NAME)
        self._from_journal = True
        self._frames.clear()  # never mix a parquet frame with a journal frame
        other = "turns" if name == "conversations" else "conversations"
        self._pending[other] = getattr(contents, other)
        table: pa.Table = getattr(contents, name)
        return table

    def grades(self, scorecard: str | None = None) -> pd.DataFrame:
        """Grades from ``grades/*.parquet``: one row per conversation x rule.

        ``scorecard`` (a rubric version id, or an object with ``rubric_version_id``) keeps only
        that scorecard's rows. With no grades yet: an empty frame with the grade columns.
        """
        folder = self.path / GRADES_DIR
        files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        if not files:
            return empty_frame(GRADES_SCHEMA)
        tables = [read_parquet_table(file, GRADES_SCHEMA) for file in files]
        table = pa.concat_tables(tables, promote_options="default")
        if scorecard is not None:
            wanted = str(getattr(scorecard, "rubric_version_id", scorecard))
            table = table.filter(pc.equal(table.column("rubric_version_id"), wanted))
        return to_frame(table, GRADES_SCHEMA)

    def transcript(self, conversation_id: str) -> pd.DataFrame:
        """The turns of one conversation in speaking order (empty if it has none)."""
        if not (self.conversations["conversation_id"] == conversation_id).any():
            raise KeyError(
                f"no conversation {conversation_id!r} in run {self.run_id} ({self.path})"
            )
        turns = self.turns
        return turns[turns["conversation_id"] == conversation_id].reset_index(drop=True)


def load_run(path_or_id: PathLike, store: PathLike = "runs") -> Run:
    """Open a run: a path to its folder, or its id inside ``store``.

    Raises :class:`RunNotFoundError` (naming the paths tried) or :class:`CorruptRunError`.
    """
    direct = Path(path_or_id)
    if (direct / MANIFEST_NAME).is_file():
        return Run(direct)
    in_store = Path(store) / os.fspath(path_or_id)
    if (in_store / MANIFEST_NAME).is_file():
        return Run(in_store)
    tried = direct if direct == in_store else f"{direct} nor {in_store}"
    raise RunNotFoundError(
        f"no run {os.fspath(path_or_id)!r}: neither {tried} holds a {MANIFEST_NAME}", in_store
    )


def finalize_run(path_or_id: PathLike, store: PathLike = "runs") -> Run:
    """Write a crashed run's parquet tables and counts from its journal (needs no writer open)."""
    run = load_run(path_or_id, store)
    writer = RunWriter._attach(run.path, None)
    return writer.finalize()


_LIST_COLUMNS: Final[dict[str, Any]] = {
    "run_id": "str",
    "created_at": "datetime64[us, UTC]",
    "finalized_at": "datetime64[us, UTC]",
    "assistant_id": "str",
    "target": "str",
    "n_conversations": "Int64",
    **dict.fromkeys(STATUSES, "Int64"),
    "finalized": "bool",
    "identity": "str",
    "evalkit_version": "str",
    "path": "str",
}


def list_runs(store: PathLike = "runs") -> pd.DataFrame:
    """One row per run in ``store``, oldest first.

    Columns: run_id, created_at, finalized_at, assistant_id, target, n_conversations, done,
    error, dropped, failed (counts as of the last finalize; from the journal for a run never
    finalized), finalized, identity, evalkit_version, path. A folder with an unreadable manifest is skipped with a warning.
    """
    root = Path(store)
    rows: list[dict[str, Any]] = []
    children = sorted(root.iterdir()) if root.is_dir() else []
    for child in children:
        manifest_path = child / MANIFEST_NAME
        if child.name.startswith(".") or not manifest_path.is_file():
            continue
        try:
            manifest = read_manifest(manifest_path)
        except StoreError as exc:
            logger.warning("list_runs: skipping %s: %s", child, exc)
            continue
        counts = manifest.get("counts") or {}
        if manifest.get("finalized_at") is None:  # never finalized (killed): count the journal
            try:
                counts = _counts(read_journal(child / JOURNAL_NAME, with_turns=False).conversations)
            except StoreError as exc:
                logger.warning("list_runs: cannot count %s: %s", child, exc)
        rows.append(
            {
                "run_id": str(manifest.get("run_id") or child.name),
                "created_at": manifest.get("created_at"),
                "finalized_at": manifest.get("finalized_at"),
                "assistant_id": manifest.get("assistant_id"),
                "target": manifest.get("target"),
                "n_conversations": counts.get("total"),
                **{status: counts.get(status) for status in STATUSES},
                "finalized": manifest.get("finalized_at") is not None,
                "identity": manifest.get("identity"),
                "evalkit_version": manifest.get("evalkit_version"),
                "path": str(child),
            }
        )
    data: dict[str, Any] = {}
    for column, dtype in _LIST_COLUMNS.items():
        values = [row[column] for row in rows]
        if dtype.startswith("datetime"):
            data[column] = pd.to_datetime(
                pd.Series(values, dtype="object"), utc=True, format="ISO8601", errors="coerce"
            ).astype(dtype)
        else:
            data[column] = pd.Series(values, dtype=dtype)
    frame = pd.DataFrame(data)
    return frame.sort_values(["created_at", "run_id"], kind="stable").reset_index(drop=True)


RunsInput: TypeAlias = PathLike | Run | Iterable[PathLike | Run]


def _resolve_runs(runs_or_store: RunsInput, store: PathLike) -> list[Run]:
    if isinstance(runs_or_store, Run):
        return [runs_or_store]
    if isinstance(runs_or_store, str | os.PathLike):
        path = Path(runs_or_store)
        if (path / MANIFEST_NAME).is_file():
            return [Run(path)]
        if path.is_dir():
            return [Run(p) for p in list_runs(path)["path"]]
        return [load_run(runs_or_store, store)]
    return [item if isinstance(item, Run) else load_run(item, store) for item in runs_or_store]


def load_runs(
    runs_or_store: RunsInput, table: TableName = "conversations", store: PathLike = "runs"
) -> pd.DataFrame:
    """Several runs' ``table`` stacked into one frame (``run_id`` tells them apart).

    ``runs_or_store`` is a store folder (every run in it, oldest first), a run folder, or an
    iterable of runs, run folders and run ids (resolved in ``store``).
    """
    if table not in _SCHEMAS:
        raise ValueError(f"table must be one of {sorted(_SCHEMAS)}, not {table!r}")
    frames = []
    for run in _resolve_runs(runs_or_store, store):
        frame = run.grades() if table == "grades" else run._frame(table)
        if len(frame):
            frames.append(frame)
    if not frames:
        return empty_frame(_SCHEMAS[table])
    return pd.concat(frames, ignore_index=True)
