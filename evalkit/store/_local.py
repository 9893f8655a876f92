"""A store in a local folder: :class:`LocalPath`, a :class:`pathlib.Path` that also speaks the
storage protocol (:class:`~evalkit.store._location.StoreLocation`).

Writes are atomic (a temp file, fsync'd, renamed over the target; the folder fsync'd), a
conditional create is a hard link that fails if the name exists, and a run's journal is one
``journal.jsonl`` appended and fsync'd under an exclusive lock.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._util import atomic_write, content_hash, fsync_dir, remove_stale_temps, temp_path_for
from ._journal import JOURNAL_NAME, JournalContents, JournalWriter, complete_size, read_journal

if TYPE_CHECKING:
    from ._location import StoreLocation
    from ._object_journal import ObjectJournalWriter

__all__ = ["LocalPath", "local_cache_for"]

if sys.platform == "win32":  # pragma: no cover - the store is tested on POSIX
    from pathlib import WindowsPath as _ConcretePath
else:
    from pathlib import PosixPath as _ConcretePath


def local_cache_for(url: str) -> Path:
    """A local folder for caches that belong to the store at ``url``."""
    base = os.environ.get("EVALKIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "evalkit"
    )
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in url)[-80:]
    return Path(base) / "stores" / f"{safe}-{content_hash(url)[:12]}"


class LocalPath(_ConcretePath):
    """A local file or folder of a store: a :class:`~pathlib.Path` (everything pathlib does
    works) plus the storage protocol's atomic writes, conditional create and run journal."""

    # ------------------------------------------------------------------ reading

    def files(self, pattern: str = "*") -> list[LocalPath]:
        try:
            with os.scandir(self) as entries:
                names = [
                    e.name for e in entries if e.is_file() and fnmatch.fnmatch(e.name, pattern)
                ]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [self / name for name in sorted(names)]

    def sizes(self) -> dict[str, int]:
        try:
            with os.scandir(self) as entries:
                return {e.name: e.stat().st_size for e in entries if e.is_file()}
        except (FileNotFoundError, NotADirectoryError):
            return {}

    def files_below(self, depth: int) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        base = len(self.parts)
        for folder, dirs, names in os.walk(self):
            parts = Path(folder).parts[base:]
            if len(parts) + 1 >= depth:
                dirs.clear()  # nothing deeper is wanted
            else:  # caches (.judge-cache, .audio) hold no run
                dirs[:] = [d for d in dirs if not d.startswith(".")]
            found.extend((*parts, name) for name in names)
        return found

    def read_many(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        found: dict[StoreLocation, bytes] = {}
        for path in paths:
            with contextlib.suppress(OSError):  # missing (or not a file): left out
                found[path] = path.read_bytes()
        return found

    def read_ahead(self, paths: Sequence[StoreLocation]) -> dict[StoreLocation, bytes]:
        return {}

    def open_input(self) -> IO[bytes]:
        return self.open("rb")

    def arrow_source(self) -> Any:
        return str(self)

    # ------------------------------------------------------------------ writing

    def replace_bytes(self, data: bytes, *, durable: bool = True) -> None:
        def write(tmp: Path) -> None:
            tmp.write_bytes(data)

        self.replace_with(write, durable=durable)

    def replace_with(self, write: Callable[[Any], None], *, durable: bool = True) -> None:
        self.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self, write, durable=durable)

    def create_bytes(self, data: bytes, *, durable: bool = True, private: bool = False) -> None:
        """Write a temp file, then hard-link it to this name (refused if the name exists), so
        readers never see a part and of two creators exactly one wins. Where the file system
        has no hard links, it checks, then renames (two creators racing may both succeed).
        ``private``: mode 0600 from the start (never readable by others, not even briefly)."""
        self.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_path_for(self)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            try:
                os.link(tmp, self)
            except FileExistsError:
                raise
            except OSError:  # no hard links here (some network and FUSE file systems)
                if self.exists():
                    raise FileExistsError(errno.EEXIST, "File exists", str(self)) from None
                os.replace(tmp, self)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if durable:
            fsync_dir(self.parent)

    def make_folder(self) -> None:
        self.mkdir(parents=True, exist_ok=True)
        fsync_dir(self.parent)

    def tidy(self) -> None:
        remove_stale_temps(self)

    def local_cache(self) -> Path:
        return Path(self)

    # ------------------------------------------------------------------ a run's journal

    def journal_bytes(self) -> int | None:
        journal = self / JOURNAL_NAME
        return complete_size(journal) if journal.exists() else None

    def read_journal(self, *, with_turns: bool = True) -> JournalContents:
        return read_journal(self / JOURNAL_NAME, with_turns=with_turns)

    def open_journal(self, *, fsync: bool = True) -> JournalWriter | ObjectJournalWriter:
        return JournalWriter(self / JOURNAL_NAME, fsync=fsync)

    # ------------------------------------------------------------------ a store's catalog

    def index_manifest(self, data: bytes) -> None:
        """A local catalog reads the manifests themselves: no index to keep."""

    def indexed_manifests(self) -> list[tuple[StoreLocation, dict[str, Any]]] | None:
        return None
