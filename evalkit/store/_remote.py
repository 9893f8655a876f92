"""A store at a URL: :class:`RemotePath`, a key in an fsspec filesystem
(``s3://bucket/prefix/run``) that speaks the storage protocol
(:class:`~evalkit.store._location.StoreLocation`).

Two writes an object store does well: ``replace_bytes`` (one PUT, so readers see the old
object or the new one, never a part) and ``create_bytes`` (a conditional create:
``If-None-Match: *`` on S3, so of two writers exactly one wins; other filesystems check
first, see :data:`ATOMIC_CREATE`). A run's journal is ``journal/*.jsonl``, one object per
group commit (:mod:`evalkit.store._object_journal`), its writer a claimed epoch
(:mod:`evalkit.store._leases`); manifests are copied to the store's catalog index
(:mod:`evalkit.store._catalog_index`). Listings are never served from fsspec's cache:
another machine may have written since.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import pyarrow as pa

from ._catalog_index import copy_to_index, indexed_manifests
from ._journal import JournalContents
from ._leases import WriterLease
from ._local import local_cache_for
from ._object_journal import ObjectJournalWriter, object_journal_bytes, read_object_journal

if TYPE_CHECKING:
    from ._journal import JournalWriter
    from ._location import StoreLocation

__all__ = ["ATOMIC_CREATE", "RemotePath"]

#: Protocols whose ``create_bytes`` is one atomic conditional request (S3's If-None-Match, and
#: the in-process memory filesystem). Elsewhere fsspec checks, then writes: two writers racing
#: within that gap can both succeed.
ATOMIC_CREATE: Final = frozenset({"s3", "s3a", "memory"})


class RemotePath:
    """``protocol://key`` on the filesystem ``fs``; immutable, compares by URL."""

    __slots__ = ("fs", "key", "protocol")

    def __init__(self, fs: Any, protocol: str, key: str) -> None:
        self.fs = fs
        self.protocol = protocol
        self.key = key.rstrip("/") or "/"

    # ------------------------------------------------------------------ naming

    def __truediv__(self, part: str) -> RemotePath:
        return RemotePath(self.fs, self.protocol, posixpath.join(self.key, str(part)))

    @property
    def name(self) -> str:
        return posixpath.basename(self.key)

    @property
    def parent(self) -> RemotePath:
        return RemotePath(self.fs, self.protocol, posixpath.dirname(self.key))

    @property
    def stem(self) -> str:
        return posixpath.splitext(self.name)[0]

    def __str__(self) -> str:
        return f"{self.protocol}://{self.key.lstrip('/')}"

    def __repr__(self) -> str:
        return f"RemotePath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemotePath) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    # ------------------------------------------------------------------ reading

    def _fresh(self) -> None:
        self.fs.invalidate_cache(self.key)

    def exists(self) -> bool:
        self._fresh()
        return bool(self.fs.exists(self.key))

    def is_file(self) -> bool:
        self._fresh()
        return bool(self.fs.isfile(self.key))

    def is_dir(self) -> bool:
        self._fresh()
        return bool(self.fs.isdir(self.key))

    def listing(self) -> list[dict[str, Any]]:
        """The entries directly inside this folder (fsspec ``ls`` details); [] when none."""
        self._fresh()
        try:
            entries: list[dict[str, Any]] = self.fs.ls(self.key, detail=True)
        except FileNotFoundError:
            return []
        own = self.key.strip("/")
        return [e for e in entries if str(e["name"]).strip("/") != own]

    def sizes(self) -> dict[str, int]:
        """File name -> size in bytes, for the files directly inside this folder."""
        return {
            posixpath.basename(str(e["name"]).rstrip("/")): int(e.get("size") or 0)
            for e in self.listing()
            if e.get("type") == "file"
        }

    def iterdir(self) -> Iterator[RemotePath]:
        for entry in self.listing():
            yield RemotePath(self.fs, self.protocol, str(entry["name"]))

    def files(self, pattern: str = "*") -> list[RemotePath]:
        """Files directly inside this folder whose name matches ``pattern``, sorted by name."""
        return [self / name for name in sorted(self.sizes()) if fnmatch.fnmatch(name, pattern)]

    def glob(self, pattern: str) -> list[RemotePath]:
        """:meth:`files` (pathlib's spelling)."""
        return self.files(pattern)

    def files_below(self, depth: int) -> list[tuple[str, ...]]:
        """One recursive listing (deeper files too: cheaper than a listing per folder)."""
        self._fresh()
        base = self.key.strip("/")
        return [
            tuple(str(k).strip("/")[len(base) :].strip("/").split("/")) for k in self.fs.find(base)
        ]

    def read_bytes(self) -> bytes:
        data: bytes = self.fs.cat_file(self.key)
        return data

    def read_many(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        """Several objects at once (concurrent requests where the filesystem can); a missing
        one is left out."""
        if not paths:
            return {}
        by_key = {_key(p): p for p in paths}
        found = self.fs.cat(list(by_key), on_error="omit")
        return {by_key[str(k).strip("/")]: v for k, v in found.items()}

    def read_ahead(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        return self.read_many(paths)

    def open_input(self) -> IO[bytes]:
        handle: IO[bytes] = self.fs.open(self.key, "rb")
        return handle

    def arrow_source(self) -> Any:
        return pa.BufferReader(self.read_bytes())  # one GET, then Arrow reads from memory

    # ------------------------------------------------------------------ writing

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Object stores have no folders: a no-op (kept so callers need not ask)."""

    def make_folder(self) -> None:
        """Object stores have no folders: a no-op."""

    def tidy(self) -> None:
        """An object is stored whole or not at all: nothing half-done to delete."""

    def replace_bytes(self, data: bytes, *, durable: bool = True) -> None:
        """Replace the object with ``data`` in one request (atomic for readers)."""
        self.fs.pipe_file(self.key, data)

    def write_bytes(self, data: bytes) -> None:
        """:meth:`replace_bytes` (pathlib's spelling)."""
        self.replace_bytes(data)

    def replace_with(self, write: Callable[[Any], None], *, durable: bool = True) -> None:
        """``write`` fills an in-memory stream, stored in one request."""
        sink = pa.BufferOutputStream()
        write(sink)
        self.replace_bytes(sink.getvalue().to_pybytes())

    def create_bytes(self, data: bytes, *, durable: bool = True, private: bool = False) -> None:
        """Create the object; :class:`FileExistsError` if it exists (see :data:`ATOMIC_CREATE`);
        ``private`` asks nothing more of an object store (who reads it is the bucket's policy)."""
        self.fs.pipe_file(self.key, data, mode="create")

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.rm_file(self.key)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def local_cache(self) -> Path:
        return local_cache_for(str(self))

    # ------------------------------------------------------------------ a run's journal

    def journal_bytes(self) -> int | None:
        return object_journal_bytes(self) or None

    def read_journal(self, *, with_turns: bool = True) -> JournalContents:
        return read_object_journal(self, with_turns=with_turns)

    def open_journal(self, *, fsync: bool = True) -> JournalWriter | ObjectJournalWriter:
        return ObjectJournalWriter(self, WriterLease.claim(self))

    # ------------------------------------------------------------------ a store's catalog

    def index_manifest(self, data: bytes) -> None:
        copy_to_index(self, data)

    def indexed_manifests(self) -> list[tuple[StoreLocation, dict[str, Any]]] | None:
        found = indexed_manifests(self)
        return None if found is None else [(folder, m) for folder, m in found]


def _key(path: StoreLocation) -> str:
    if not isinstance(path, RemotePath):
        raise TypeError(f"{path} is not in an fsspec store")
    return path.key.strip("/")
