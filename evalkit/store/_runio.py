"""A run's journal wherever the run lives: one local ``journal.jsonl`` (appended, fsync'd) or,
at a URL, ``journal/*.jsonl`` objects (one per group commit). Callers ask here, not which."""

from __future__ import annotations

from pathlib import Path

from ._journal import JOURNAL_NAME, JournalContents, JournalWriter, complete_size, read_journal
from ._leases import WriterLease
from ._object_journal import ObjectJournalWriter, object_journal_bytes, read_object_journal
from ._remote import RemotePath
from ._urls import RunPath

__all__ = ["journal_state", "load_journal", "open_journal"]


def journal_state(run_path: RunPath) -> int | None:
    """Bytes of complete journal lines, or None when the run has no journal."""
    if isinstance(run_path, RemotePath):
        size = object_journal_bytes(run_path)
        return size or None
    journal = run_path / JOURNAL_NAME
    return complete_size(journal) if journal.exists() else None


def load_journal(run_path: RunPath, *, with_turns: bool = True) -> JournalContents:
    """The run's journal read into tables (last line per conversation wins)."""
    if isinstance(run_path, RemotePath):
        return read_object_journal(run_path, with_turns=with_turns)
    return read_journal(Path(run_path) / JOURNAL_NAME, with_turns=with_turns)


def open_journal(run_path: RunPath, *, fsync: bool = True) -> JournalWriter | ObjectJournalWriter:
    """A journal writer for the run: the locked local file, or a new writer epoch at a URL."""
    if isinstance(run_path, RemotePath):
        return ObjectJournalWriter(run_path, WriterLease.claim(run_path))
    return JournalWriter(run_path / JOURNAL_NAME, fsync=fsync)
