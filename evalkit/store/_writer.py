"""Writing a run folder (its layout: :mod:`evalkit.store`).

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

import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pyarrow as pa

from .. import _version
from .._util import now_iso
from ._errors import (
    CorruptRunError,
    IdentityMismatchError,
    RunExistsError,
    StoreError,
    storage_errors,
)
from ._journal import (
    JournalWriter,
    encode_line,
    records_from_table,
)
from ._layout import (
    CONVERSATIONS_FILE,
    MANIFEST_FORMAT,
    STAMP_KEY,
    TURNS_FILE,
    check_run_id,
    count_statuses,
    requested_identity,
)
from ._location import StoreLocation
from ._manifest import (
    MANIFEST_NAME,
    create_manifest,
    read_manifest,
    scrub_secrets,
    write_manifest,
)
from ._object_journal import ObjectJournalWriter
from ._reader import Run, load_run
from ._records import (
    ConversationRecord,
    TurnInput,
    check_turns,
)
from ._tables import (
    write_parquet_atomic,
)
from ._urls import StoreLike, open_store

Journal = JournalWriter | ObjectJournalWriter

logger = logging.getLogger("evalkit.store")

#: Manifest keys a run's writer never owns: others write them while it may be open or after
#: an earlier finalize (the grading's note of each scorecard graded,
#: :func:`evalkit.store.record_grades_summary`; a sequential comparison's looks,
#: :func:`evalkit.store.record_in_manifest`; the simulation flags counted when a run is graded,
#: :func:`evalkit.diagnose.record_flags`), so finalize takes them from the stored manifest
#: instead of its own copy.
NOT_THE_WRITERS: Final = ("grades", "sequential", "simulation_flags")


class RunWriter:
    """Writes one run folder: manifest, journal appends, and the final tables.

    Make one with :meth:`create` (a new run), :meth:`resume` (an existing one) or :meth:`open`
    (either). One writer per run at a time, across processes (an exclusive file lock); close it
    with :meth:`close`, :meth:`finalize`, or a ``with`` block.
    """

    def __init__(
        self,
        path: StoreLocation,
        manifest: dict[str, Any],
        journal: Journal,
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
        cls, store: StoreLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """Start a new run in ``<store>/<run_id>`` (a folder, or an fsspec URL).

        Refuses a folder that already holds a run: :class:`IdentityMismatchError` if it was made
        from another definition, :class:`RunExistsError` otherwise (use :meth:`resume`).
        ``fsync=False`` skips the per-conversation fsync (benchmarks, throwaway runs). The
        manifest is created conditionally, so of two writers creating one run id exactly one
        wins; the winner then opens the journal (a locked file, or at a URL a claimed writer
        epoch, see :mod:`evalkit.store._leases`).
        """
        path = open_store(store) / check_run_id(run_id)
        identity = requested_identity(manifest, run_id)
        cls._refuse_existing(path, identity)
        if path.journal_bytes():
            raise CorruptRunError(
                f"{path} has a journal but no {MANIFEST_NAME}; restore the manifest or "
                "delete the folder",
                path,
            )
        with storage_errors(path, "create the run folder"):
            path.make_folder()
        stored = cls._new_manifest(run_id, identity, manifest)
        try:
            create_manifest(path / MANIFEST_NAME, stored)
        except FileExistsError:  # another writer created it since we looked
            cls._refuse_existing(path, identity)
            raise
        journal = path.open_journal(fsync=fsync)
        try:
            if journal.size:  # lines stored between our look and our manifest
                raise CorruptRunError(
                    f"{path} has journal lines from before its {MANIFEST_NAME}; delete them",
                    path,
                )
            path.tidy()
        except BaseException:
            journal.close()
            raise
        logger.info("run %s: created at %s", run_id, path)
        return cls(path, stored, journal)

    @staticmethod
    def _new_manifest(run_id: str, identity: str, manifest: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "format": MANIFEST_FORMAT,
            "run_id": run_id,
            "identity": identity,
            "created_at": now_iso("auto"),
            "evalkit_version": _version.__version__,
            **scrub_secrets(dict(manifest)),
            "finalized_at": None,
        }

    @staticmethod
    def _refuse_existing(path: StoreLocation, identity: str) -> None:
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
        cls, store: StoreLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """Continue the run in ``<store>/<run_id>``; refuses when the identity hash differs.

        The journal is replayed (a torn last line is cut off), :attr:`finished` lists the
        conversations already recorded, and ``manifest``'s values update the stored manifest
        (``created_at`` is kept; the time is added to ``resumed_at``). At a URL the writer
        takes the run over: an older writer still running stops at its next commit.
        """
        path = open_store(store) / check_run_id(run_id)
        identity = requested_identity(manifest, run_id)
        stored = read_manifest(path / MANIFEST_NAME)
        if stored.get("identity") != identity:
            raise IdentityMismatchError(path, str(stored.get("identity")), identity)
        update = {
            **scrub_secrets(dict(manifest)),
            "created_at": stored.get("created_at"),
            "resumed_at": [*stored.get("resumed_at", []), now_iso("auto")],
            "finalized_at": None,
        }
        return cls._attach(path, update, fsync=fsync)

    @classmethod
    def open(
        cls, store: StoreLike, run_id: str, manifest: Mapping[str, Any], *, fsync: bool = True
    ) -> RunWriter:
        """:meth:`resume` the run if ``<store>/<run_id>`` holds one, else :meth:`create` it."""
        store = open_store(store)
        if (store / check_run_id(run_id) / MANIFEST_NAME).exists():
            return cls.resume(store, run_id, manifest, fsync=fsync)
        return cls.create(store, run_id, manifest, fsync=fsync)

    @classmethod
    def _attach(
        cls, path: StoreLocation, update: Mapping[str, Any] | None, *, fsync: bool = True
    ) -> RunWriter:
        journal = path.open_journal(fsync=fsync)
        try:
            stored = read_manifest(path / MANIFEST_NAME)
            recorded = path.read_journal(with_turns=False).conversations
            path.tidy()
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
        self._journal.append(self._encode(record, turns))
        self._remember(record)

    async def aappend(self, record: ConversationRecord, turns: Sequence[TurnInput]) -> None:
        """:meth:`append` without blocking the event loop; returns once the line is durable.

        The line is checked and encoded here, then written by the journal's committer thread,
        which fsyncs once for every line waiting (group commit). If the awaiting task is
        cancelled the append still completes (the conversation is recorded, and skipped on
        resume).
        """
        line = self._encode(record, turns)
        await self._journal.aappend(line, lambda: self._remember(record))

    def _encode(self, record: ConversationRecord, turns: Sequence[TurnInput]) -> bytes:
        record.check()
        if record.run_id != self.run_id:
            raise ValueError(
                f"conversation {record.conversation_id!r} has run_id {record.run_id!r}, "
                f"but this writer writes run {self.run_id!r}"
            )
        return encode_line(record, check_turns(record, turns))

    def _remember(self, record: ConversationRecord) -> None:
        with self._lock:
            self._records[record.conversation_id] = record
            self._ids.add(record.conversation_id)
            self._finished = None

    def finalize(
        self, extra_manifest: Mapping[str, Any] | None = None, *, close: bool = True
    ) -> Run:
        """Write the parquet tables from the journal and the manifest's counts; return the Run.

        ``extra_manifest`` values (scrubbed of secrets) are merged into the manifest. The writer
        is closed afterwards unless ``close=False``.
        """
        if self.closed:
            raise StoreError(f"the writer of {self.path} is closed", self.path)
        try:
            run = self._finalize(extra_manifest)
        except BaseException:
            if close:  # a failed finalize never keeps the run locked (resume it right away)
                self.close()
            raise
        if close:
            self.close()
        return run

    def _finalize(self, extra_manifest: Mapping[str, Any] | None) -> Run:
        self._journal.sync()
        contents = self._journal.read_back()
        stamp = {STAMP_KEY: str(contents.journal_bytes), "evalkit.run_id": self.run_id}
        write_parquet_atomic(contents.turns, self.path / TURNS_FILE, stamp)
        write_parquet_atomic(contents.conversations, self.path / CONVERSATIONS_FILE, stamp)
        with self._lock:
            self._manifest.update(scrub_secrets(dict(extra_manifest or {})))
            self._manifest.update(
                {
                    "counts": count_statuses(contents.conversations),
                    "n_turns": contents.turns.num_rows,
                    "journal": {
                        "bytes": contents.journal_bytes,
                        "lines": contents.lines,
                        "superseded": contents.superseded,
                    },
                    "finalized_at": now_iso("auto"),
                }
            )
            self._keep_others_notes()
            write_manifest(self.path / MANIFEST_NAME, self._manifest)
        logger.info(
            "run %s: finalized %d conversation(s), %d turn(s)",
            self.run_id,
            contents.conversations.num_rows,
            contents.turns.num_rows,
        )
        return Run(self.path)

    def _keep_others_notes(self) -> None:
        """Take the keys other writers own (:data:`NOT_THE_WRITERS`: the grading's note, written
        by ``grade_run`` while this writer was open or after an earlier finalize) from the
        manifest as stored now, so finalize never writes an older copy over them."""
        try:
            stored = read_manifest(self.path / MANIFEST_NAME)
        except StoreError as exc:  # finalize still writes the writer's own manifest
            logger.warning(
                "run %s: cannot re-read the manifest before finalize: %s", self.run_id, exc
            )
            return
        for key in NOT_THE_WRITERS:
            if key in stored:
                self._manifest[key] = stored[key]
            else:
                self._manifest.pop(key, None)

    def close(self) -> None:
        """fsync and close the journal, releasing the run. Idempotent; never raises on a
        failed fsync (each append was already made durable)."""
        self._closer()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def finalize_run(path_or_id: StoreLike, store: StoreLike = "runs") -> Run:
    """Write a crashed run's parquet tables and counts from its journal (needs no writer open)."""
    run = load_run(path_or_id, store)
    writer = RunWriter._attach(run.path, None)
    return writer.finalize()
