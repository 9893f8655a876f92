"""The storage protocol: what a store needs of a place, whether a local folder or a URL.

Two implementations: :class:`~evalkit.store.LocalPath` (a :class:`pathlib.Path` whose writes
are atomic: temp file, fsync, rename) and :class:`~evalkit.store.RemotePath` (a key on an
fsspec filesystem: one request per write, a conditional create where the store has one).
Code outside :mod:`evalkit.store` holds a :class:`StoreLocation` and never asks which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ._journal import JournalContents, JournalWriter
    from ._object_journal import ObjectJournalWriter

__all__ = ["StoreLocation"]


class StoreLocation(Protocol):
    """A file or folder of a store (a local path or a URL), and the few operations on it."""

    # ------------------------------------------------------------------ naming

    @property
    def name(self) -> str: ...

    @property
    def stem(self) -> str: ...

    @property
    def parent(self) -> StoreLocation: ...

    def __truediv__(self, part: str) -> StoreLocation: ...

    # ------------------------------------------------------------------ reading

    def exists(self) -> bool: ...

    def is_file(self) -> bool: ...

    def is_dir(self) -> bool: ...

    def iterdir(self) -> Iterator[StoreLocation]:
        """What is directly inside this folder (fresh: never a cached listing)."""
        ...

    def files(self, pattern: str = "*") -> Sequence[StoreLocation]:
        """Files directly inside this folder whose name matches ``pattern``, sorted by name."""
        ...

    def sizes(self) -> dict[str, int]:
        """File name -> size in bytes, for the files directly inside this folder."""
        ...

    def files_below(self, depth: int) -> list[tuple[str, ...]]:
        """The parts of every file's path below this folder, up to ``depth`` parts (a backend
        may look deeper, and may leave out what is inside hidden folders)."""
        ...

    def read_bytes(self) -> bytes: ...

    def read_many(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        """Several files at once (concurrent requests where that pays); missing ones left out."""
        ...

    def read_ahead(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        """:meth:`read_many` where fetching ahead pays (an object store), else ``{}``: a local
        file is read when it is needed, so a store's files are never all in memory at once."""
        ...

    def open_input(self) -> IO[bytes]:
        """A seekable binary handle (a parquet footer is read without the rest)."""
        ...

    def arrow_source(self) -> Any:
        """What :func:`pyarrow.parquet.read_table` reads this file from (one request at a URL)."""
        ...

    # ------------------------------------------------------------------ writing

    def replace_bytes(self, data: bytes, *, durable: bool = True) -> None:
        """Replace the file with ``data``; readers see the old or the new one, never a part."""
        ...

    def replace_with(self, write: Callable[[Any], None], *, durable: bool = True) -> None:
        """Like :meth:`replace_bytes`, with ``write(destination)`` writing the content (a
        temp path or an in-memory stream: what :func:`pyarrow.parquet.write_table` takes)."""
        ...

    def create_bytes(self, data: bytes, *, durable: bool = True, private: bool = False) -> None:
        """Create the file with ``data``; :class:`FileExistsError` if it exists (of two
        writers exactly one wins, where the store has a conditional create). ``private``: a
        local file only its owner reads (mode 0600); an object's access is its bucket's."""
        ...

    def make_folder(self) -> None:
        """Create this folder and its parents, durably (object stores have none: a no-op)."""
        ...

    def tidy(self) -> None:
        """Delete what a crashed writer left half-done in this folder (temp files)."""
        ...

    def unlink(self, missing_ok: bool = False) -> None: ...

    def local_cache(self) -> Path:
        """A local folder for what belongs with this place but stays on this machine: the
        folder itself, or a cache folder named after the URL."""
        ...

    # ------------------------------------------------------------------ a run's journal

    def journal_bytes(self) -> int | None:
        """Bytes of complete journal lines of the run in this folder; None without a journal."""
        ...

    def read_journal(self, *, with_turns: bool = True) -> JournalContents:
        """The run's journal read into tables (the last line per conversation wins)."""
        ...

    def open_journal(self, *, fsync: bool = True) -> JournalWriter | ObjectJournalWriter:
        """The one writer of the run's journal (a locked file, or a claimed writer epoch)."""
        ...

    # ------------------------------------------------------------------ a store's catalog

    def index_manifest(self, data: bytes) -> None:
        """Called after this manifest was written with ``data``: keep the store's catalog
        index current (only where reading many manifests costs a request each)."""
        ...

    def indexed_manifests(self) -> list[tuple[StoreLocation, dict[str, Any]]] | None:
        """(run folder, manifest) through the store's catalog index; None where it has none."""
        ...
