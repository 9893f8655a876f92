"""The run journal: ``journal.jsonl``, one JSON line per finished conversation.

A line is ``{"v": 1, "conversation": {...record...}, "turns": [{"index", "role", "text", "at_s"}, ...]}``
(``at_s`` absent in journals written before turn timing: read as null).

Durability rules:

* a line counts only once its ``\\n`` is on disk; a torn last line (a crash mid-write) is ignored
  by readers and cut off by the next writer before it appends;
* each append is one ``write`` of the whole line, then ``fsync`` (unless turned off), so a
  conversation ``append`` returned for survives a crash; :meth:`JournalWriter.aappend` (the
  runner's path) hands lines to one committer thread, which writes every line waiting, fsyncs
  once for all of them (group commit) and only then wakes their awaiting coroutines: a line is
  reported durable only after an fsync that began after its write, exactly as with ``append``;
* a failed write is rolled back (truncated) so the journal never holds a half line in the middle;
* the same ``conversation_id`` may appear more than once (a conversation the runner re-ran):
  **the last line wins**;
* one writer at a time: the writer holds an exclusive ``flock`` on the file.

Readers parse the whole file with Arrow's multithreaded JSON reader (about 10x faster than
``json.loads`` per line) and fall back to a line-by-line scan only to name a corrupt line.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .._util import redact_text
from ._committer import GroupCommitter, Pending
from ._errors import CorruptRunError, RunLockedError, StoreError, storage_error, storage_errors
from ._records import CONVERSATION_FIELDS, ROLES, STATUSES, ConversationRecord, TurnRecord
from ._schemas import CONVERSATIONS_SCHEMA, TURNS_SCHEMA

if TYPE_CHECKING:
    pass

if sys.platform != "win32":
    import fcntl

__all__ = [
    "JOURNAL_NAME",
    "JOURNAL_VERSION",
    "JournalContents",
    "JournalWriter",
    "complete_size",
    "encode_line",
    "parse_journal",
    "read_journal",
]

logger = logging.getLogger("evalkit.store")

JOURNAL_NAME: Final = "journal.jsonl"
JOURNAL_VERSION: Final = 1
_BLOCK_SIZE: Final = 16 << 20  # Arrow JSON block; a line longer than this takes a slower path

_TURN_TYPE = pa.struct(
    [
        ("index", pa.int64()),
        ("role", pa.large_string()),
        ("text", pa.large_string()),
        ("at_s", pa.float64()),
    ]
)
_LINE_SCHEMA: Final = pa.schema(
    [
        pa.field("v", pa.int64()),
        pa.field("conversation", pa.struct(list(CONVERSATIONS_SCHEMA))),
        pa.field("turns", pa.list_(_TURN_TYPE)),
    ]
)
_HEAD_SCHEMA: Final = _LINE_SCHEMA.remove(2)  # without the turns


def encode_line(record: ConversationRecord, turns: Sequence[TurnRecord]) -> bytes:
    """One journal line (with its newline), API keys redacted."""
    line = json.dumps(
        {
            "v": JOURNAL_VERSION,
            "conversation": record.to_json_dict(),
            "turns": [
                {"index": t.index, "role": t.role, "text": t.text, "at_s": t.at_s} for t in turns
            ],
        },
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    if "sk_api_" in line:
        line = redact_text(line)
    return (line + "\n").encode("utf-8")


def complete_size(path: Path) -> int:
    """Bytes of ``path`` up to and including its last newline (0 if missing or no newline)."""
    try:
        with path.open("rb") as f:
            end = f.seek(0, os.SEEK_END)
            pos = end
            while pos > 0:
                step = min(pos, 1 << 16)
                pos -= step
                f.seek(pos)
                chunk = f.read(step)
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    return pos + nl + 1
            return 0
    except FileNotFoundError:
        return 0


class JournalWriter(GroupCommitter):
    """Appends lines to a journal; thread-safe; one per journal (exclusive lock)."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        super().__init__(f"evalkit-journal-{path.parent.name}")
        self.path = path
        self.fsync = fsync
        self._lock = threading.Lock()
        self._broken: str | None = None
        with storage_errors(path, "open the journal"):
            self._fd: int | None = self._open(path)

    def _open(self, path: Path) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o666)  # like the run's other files: 0644 under umask 022
        try:
            if sys.platform != "win32":
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise RunLockedError(
                        f"{path} is open for writing by another RunWriter (this or another "
                        "process); close it first",
                        path,
                    ) from None
            size = os.fstat(fd).st_size
            self._size = complete_size(path)
            if self._size != size:
                logger.warning(
                    "%s: ignoring a torn last line (%d bytes) left by a crash",
                    path,
                    size - self._size,
                )
                os.ftruncate(fd, self._size)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @property
    def size(self) -> int:
        """Bytes written so far (all complete lines)."""
        return self._size

    @property
    def closed(self) -> bool:
        return self._fd is None

    def append(self, line: bytes) -> None:
        """Write one complete line (ending in ``\\n``) and make it durable.

        The write happens under the lock; the fsync after it does not, so appends from several
        threads share their fsyncs (group commit) instead of queueing behind each other.
        """
        fd = self._write(line)
        if self.fsync:
            self._fsync(fd)

    def _accepting(self) -> bool:
        return self._fd is not None

    def _write_batch(self, batch: list[Pending]) -> None:
        """Write each line, then one fsync for the batch (group commit); errors go on items."""
        fd: int | None = None
        for item in batch:
            try:
                fd = self._write(item.line)
            except BaseException as exc:
                item.error = exc
        if fd is not None and self.fsync:
            try:
                self._fsync(fd)
            except BaseException as exc:
                for item in batch:
                    item.error = item.error or exc

    def _write(self, line: bytes) -> int:
        """Write ``line`` under the lock (rolled back if it fails); the fd it went to."""
        with self._lock:
            fd = self._fd
            if fd is None:
                raise StoreError(f"{self.path}: the journal is closed", self.path)
            if self._broken is not None:
                raise StoreError(
                    f"{self.path}: an earlier write failed and could not be undone "
                    f"({self._broken}); reopen the run to continue",
                    self.path,
                )
            try:
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            except BaseException as exc:  # also Ctrl-C between two partial writes
                self._rollback(fd)
                if isinstance(exc, OSError):
                    raise storage_error(exc, self.path, "append to") from exc
                raise
            self._size += len(line)
        return fd

    def _fsync(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            raise storage_error(exc, self.path, "fsync") from exc

    def _rollback(self, fd: int) -> None:
        """Cut a partly written line, so the next append never glues onto half a line."""
        try:
            os.ftruncate(fd, complete_size(self.path))
        except OSError as exc:
            self._broken = str(exc)

    def read_back(self) -> JournalContents:
        """Everything in the journal, read into tables (for finalize)."""
        return read_journal(self.path)

    def sync(self) -> None:
        """Wait for the lines :meth:`aappend` holds, then fsync (a no-op after close)."""
        self._drain()
        with self._lock, storage_errors(self.path, "fsync"):
            if self._fd is not None:
                os.fsync(self._fd)

    def close(self) -> None:
        """Commit what :meth:`aappend` holds, fsync, release the lock, close. Idempotent."""
        self._stop_committer()
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is None:
                return
            try:
                os.fsync(fd)
            except OSError as exc:  # every append was fsync'd already; release the lock anyway
                logger.warning("%s: fsync at close failed (%s)", self.path, exc)
            finally:
                os.close(fd)  # closing releases the flock


@dataclass(frozen=True, slots=True)
class JournalContents:
    """A journal read into Arrow tables (last line per conversation wins; sorted)."""

    conversations: pa.Table
    turns: pa.Table
    journal_bytes: int  # complete lines read (the torn tail excluded)
    lines: int
    superseded: int  # lines replaced by a later line for the same conversation

    def records(self) -> dict[str, ConversationRecord]:
        """The conversations as records, keyed by conversation id."""
        return records_from_table(self.conversations)


def records_from_table(conversations: pa.Table) -> dict[str, ConversationRecord]:
    """Records keyed by conversation id, from a conversations table."""
    columns = [conversations.column(name).to_pylist() for name in CONVERSATION_FIELDS]
    out = {}
    for values in zip(*columns, strict=True):
        row = dict(zip(CONVERSATION_FIELDS, values, strict=True))
        row["started_at"] = row["started_at"].astimezone(UTC)
        row["finished_at"] = row["finished_at"].astimezone(UTC)
        out[row["conversation_id"]] = ConversationRecord(**row)
    return out


def _empty_contents(size: int = 0) -> JournalContents:
    return JournalContents(
        CONVERSATIONS_SCHEMA.empty_table(), TURNS_SCHEMA.empty_table(), size, 0, 0
    )


def _diagnose(path: Any, body: memoryview) -> None:
    """Raise CorruptRunError naming the first line that is not a journal entry."""
    start = 0
    number = 0
    data = body.tobytes()
    while start < len(data):
        end = data.index(b"\n", start)
        number += 1
        raw = data[start:end]
        start = end + 1
        if not raw.strip():
            continue
        try:
            entry: Any = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptRunError(f"{path}: line {number} is not valid JSON ({exc})", path) from exc
        conv = entry.get("conversation") if isinstance(entry, dict) else None
        if not isinstance(conv, dict) or not isinstance(entry.get("turns", []), list):
            raise CorruptRunError(f"{path}: line {number} is not a journal entry", path)


def _parse(path: Any, body: memoryview, schema: pa.Schema) -> pa.Table:
    def read(block_size: int) -> pa.Table:
        return pj.read_json(
            pa.BufferReader(pa.py_buffer(body)),
            read_options=pj.ReadOptions(block_size=block_size),
            parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="ignore"
            ),
        )

    try:
        return read(_BLOCK_SIZE)
    except pa.ArrowInvalid as first:
        _diagnose(path, body)  # raises with a line number if a line is malformed
        try:  # every line is JSON: maybe one line is longer than a block
            return read(len(body) + 1)
        except pa.ArrowInvalid:
            raise CorruptRunError(f"{path} cannot be read: {first}", path) from first


def _check_required(
    path: Any, table: pa.Table, schema: pa.Schema, where: Callable[[int], str]
) -> None:
    for field in schema:
        if field.nullable:
            continue
        column = table.column(field.name)
        if column.null_count:
            row = pc.index(pc.is_null(column), True).as_py()
            raise CorruptRunError(f"{path}: {where(row)} lacks {field.name!r}", path)


def _check_values(
    path: Any, column: Any, allowed: Sequence[str], name: str, where: Callable[[int], str]
) -> None:
    if len(column) == 0 or set(pc.unique(column).to_pylist()) <= set(allowed):
        return  # (no pa.array of the allowed values: pyarrow imports pandas to build one)
    ok = pc.is_in(column, value_set=pa.array(allowed, pa.large_string()))
    if not pc.all(ok).as_py():
        row = pc.index(ok, False).as_py()
        raise CorruptRunError(
            f"{path}: {where(row)}: {name} {column[row].as_py()!r} is not one of {allowed}", path
        )


def read_journal(path: Path, *, with_turns: bool = True) -> JournalContents:
    """Read every complete line of a journal into tables; a torn last line is ignored.

    Conversations are sorted by (cell_id, repeat, conversation_id), turns follow their
    conversation in index order, so the tables do not depend on finishing order.
    ``with_turns=False`` skips the turns (faster; ``turns`` is then empty).
    """
    try:  # the bytes go straight to parse_journal, which drops them before building tables
        return parse_journal(path.read_bytes(), path, with_turns=with_turns)
    except FileNotFoundError:
        return _empty_contents()


def parse_journal(data: bytes, path: Any, *, with_turns: bool = True) -> JournalContents:
    """:func:`read_journal` on bytes already read (``path`` names the source in errors)."""
    end = data.rfind(b"\n") + 1
    if end < len(data):
        logger.info("%s: ignoring a torn last line (%d bytes)", path, len(data) - end)
    if end == 0 or not data[:end].strip():
        return _empty_contents(end)
    raw = _parse(path, memoryview(data)[:end], _LINE_SCHEMA if with_turns else _HEAD_SCHEMA)
    del data
    lines = raw.num_rows

    conv_col = raw.column("conversation")
    if conv_col.null_count:
        row = pc.index(pc.is_null(conv_col), True).as_py()
        raise CorruptRunError(f"{path}: entry {row + 1} has no conversation", path)
    if (pc.max(raw.column("v")).as_py() or 0) > JOURNAL_VERSION:
        raise CorruptRunError(f"{path} was written by a newer evalkit; upgrade to read it", path)
    struct = conv_col.combine_chunks()
    conversations = pa.Table.from_arrays(struct.flatten(), schema=CONVERSATIONS_SCHEMA)

    def entry(row: int) -> str:
        return f"entry {row + 1}"

    _check_required(path, conversations, CONVERSATIONS_SCHEMA, entry)
    _check_values(path, conversations.column("status"), STATUSES, "status", entry)
    turn_lists = raw.column("turns").combine_chunks() if with_turns else None
    del raw, struct

    ids = conversations.column("conversation_id")
    superseded = lines - pc.count_distinct(ids).as_py()
    if superseded:
        import pandas as pd  # only when a conversation was written twice (a re-run)

        dup = pd.Series(ids.to_numpy(zero_copy_only=False)).duplicated(keep="last").to_numpy()
        keep = pa.array(~dup)
        conversations = conversations.filter(keep)
        turn_lists = turn_lists.filter(keep) if turn_lists is not None else None
    order = pc.sort_indices(
        conversations,
        sort_keys=[
            ("cell_id", "ascending"),
            ("repeat", "ascending"),
            ("conversation_id", "ascending"),
        ],
    )
    conversations = conversations.take(order)
    if turn_lists is None:
        # from_batches, not schema.empty_table(): that one imports pandas
        no_turns = pa.Table.from_batches([], schema=TURNS_SCHEMA)
        return JournalContents(conversations, no_turns, end, lines, superseded)
    turn_lists = turn_lists.take(order)

    parents = pc.list_parent_indices(turn_lists)
    values = pc.list_flatten(turn_lists)
    turns = pa.Table.from_arrays(
        [
            conversations.column("run_id").take(parents),
            conversations.column("conversation_id").take(parents),
            *values.flatten(),
        ],
        schema=TURNS_SCHEMA,
    )

    def turn(row: int) -> str:
        cid = turns.column("conversation_id")[row].as_py()
        return f"turn row {row + 1} (conversation {cid!r})"

    _check_required(path, turns, TURNS_SCHEMA, turn)
    _check_values(path, turns.column("role"), ROLES, "role", turn)
    return JournalContents(conversations, turns, end, lines, superseded)
