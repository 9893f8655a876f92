"""The journal of a run at a URL: ``journal/<epoch>-<seq>.jsonl``, one object per group commit.

Object stores cannot append or fsync, so each commit is a new object holding the batch's
lines, created in one request (a conditional create, so nothing is ever overwritten). A PUT is
all or nothing: there is no torn line to cut. A conversation counts as recorded only once the
object holding it is stored. Readers list the objects, fetch them concurrently and read them
in name order (epoch, then sequence) as one journal: the last line per conversation wins,
exactly as in a local ``journal.jsonl``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from ._committer import GroupCommitter, Pending
from ._errors import StoreError, storage_error
from ._journal import JournalContents, parse_journal
from ._leases import WriterLease

if TYPE_CHECKING:
    from ._remote import RemotePath

__all__ = ["JOURNAL_DIR", "ObjectJournalWriter", "object_journal_bytes", "read_object_journal"]

logger = logging.getLogger("evalkit.store")

JOURNAL_DIR: Final = "journal"
#: A writer keeps the objects it stored, up to this many bytes, so finalize need not fetch
#: them back (beyond it, finalize reads them from the store like any reader).
KEEP_BYTES: Final = 64 * 1024 * 1024


def _object_names(run_path: RemotePath) -> dict[str, int]:
    """Journal object name -> size, in commit order."""
    sizes = (run_path / JOURNAL_DIR).sizes()
    return {name: sizes[name] for name in sorted(sizes) if name.endswith(".jsonl")}


def object_journal_bytes(run_path: RemotePath) -> int:
    """Bytes of every journal object (grows with each commit; names the journal's state)."""
    return sum(_object_names(run_path).values())


def read_object_journal(
    run_path: RemotePath,
    *,
    with_turns: bool = True,
    known: Mapping[str, bytes] | None = None,
) -> JournalContents:
    """Every journal object of the run, read as one journal (see :func:`parse_journal`).

    ``known``: object name -> bytes this process stored itself (a writer finalizing); those
    are not fetched again. Objects are never rewritten, so a name's bytes never change.
    """
    folder = run_path / JOURNAL_DIR
    names = list(_object_names(run_path))
    have = dict(known or {})
    paths = [folder / name for name in names if name not in have]
    found = {p.name: data for p, data in folder.read_many(paths).items()}
    missing = [str(p) for p in paths if p.name not in found]
    if missing:
        raise StoreError(f"{run_path}: journal objects vanished while reading: {missing[:3]}")
    data = b"".join(have[name] if name in have else found[name] for name in names)
    return parse_journal(data, folder, with_turns=with_turns)


#: How long a commit waits for more lines to join it: each commit is a PUT (~1.6 ms of client
#: CPU on loopback), and a conversation counts only once its object is stored, so this is
#: also the most a conversation's count waits beyond the PUT itself.
LINGER_S: Final = 0.02


class ObjectJournalWriter(GroupCommitter):
    """Writes journal objects for one writer epoch; thread-safe."""

    linger = LINGER_S

    def __init__(self, run_path: RemotePath, lease: WriterLease) -> None:
        super().__init__(f"evalkit-journal-{run_path.name}")
        self.run_path = run_path
        self.path = run_path / JOURNAL_DIR
        self.lease = lease
        self._lock = threading.Lock()
        self._seq = 0
        self._closed = False
        self._size = object_journal_bytes(run_path)
        self._kept: dict[str, bytes] | None = {}
        self._kept_bytes = 0

    @property
    def size(self) -> int:
        """Bytes in the journal: what was there at open plus what this writer stored."""
        return self._size

    @property
    def closed(self) -> bool:
        return self._closed

    def stored_objects(self) -> dict[str, bytes]:
        """Name -> bytes of the objects this writer stored (empty once past
        :data:`KEEP_BYTES`): what finalize need not fetch back."""
        with self._lock:
            return dict(self._kept or {})

    def _accepting(self) -> bool:
        return not self._closed

    def _store(self, data: bytes) -> None:
        """One object with ``data``; durable when this returns."""
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.path}: the journal is closed", self.path)
            self.lease.check()
            self._seq += 1
            target = self.path / f"{self.lease.epoch:06d}-{self._seq:09d}.jsonl"
        try:
            target.create_bytes(data)
        except OSError as exc:
            raise storage_error(exc, target, "store") from exc
        with self._lock:
            self._size += len(data)
            self._keep(target.name, data)

    def _keep(self, name: str, data: bytes) -> None:
        if self._kept is None:
            return
        self._kept_bytes += len(data)
        if self._kept_bytes > KEEP_BYTES:
            self._kept = None  # a big run: finalize reads the objects back instead
            return
        self._kept[name] = data

    def append(self, line: bytes) -> None:
        """Store one line as its own object; durable when this returns."""
        self._store(line)

    def _write_batch(self, batch: list[Pending]) -> None:
        try:
            self._store(b"".join(item.line for item in batch))
        except BaseException as exc:
            for item in batch:
                item.error = exc

    def read_back(self) -> JournalContents:
        """Everything in the journal, read into tables (for finalize); refuses once a newer
        writer took the run over. The objects this writer stored are not fetched back."""
        self.lease.check(now=True)  # never finalize over a newer writer
        return read_object_journal(self.run_path, known=self.stored_objects())

    def sync(self) -> None:
        """Wait for the lines :meth:`aappend` holds (each commit is durable when stored)."""
        self._drain()

    def close(self) -> None:
        """Commit what :meth:`aappend` holds, then close. Idempotent."""
        self._stop_committer()
        with self._lock:
            self._closed = True
