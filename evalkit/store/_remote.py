"""A path inside an fsspec filesystem (``s3://bucket/prefix/run``), shaped like :class:`Path`.

Only what the store uses: ``/``, ``name``, ``parent``, ``exists``, ``is_file``, ``is_dir``,
``iterdir``, ``glob``, ``read_bytes``, and two writes an object store does well: ``write_bytes``
(one PUT, so readers see the old object or the new one, never a part) and ``create_bytes`` (a
conditional create: ``If-None-Match: *`` on S3, so of two writers exactly one wins; other
filesystems check first, see :data:`ATOMIC_CREATE`). Listings are never served from fsspec's
cache: another machine may have written since.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator
from typing import Any, Final

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

    def glob(self, pattern: str) -> list[RemotePath]:
        """Files directly inside this folder whose name matches ``pattern``."""
        return [self / name for name in sorted(self.sizes()) if fnmatch.fnmatch(name, pattern)]

    def read_bytes(self) -> bytes:
        data: bytes = self.fs.cat_file(self.key)
        return data

    def read_many(self, paths: list[RemotePath]) -> dict[RemotePath, bytes]:
        """Several objects at once (concurrent requests where the filesystem can); a missing
        one is left out."""
        if not paths:
            return {}
        found = self.fs.cat([p.key for p in paths], on_error="omit")
        by_key = {p.key.strip("/"): p for p in paths}
        return {by_key[str(k).strip("/")]: v for k, v in found.items()}

    # ------------------------------------------------------------------ writing

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Object stores have no folders: a no-op (kept so callers need not ask)."""

    def write_bytes(self, data: bytes) -> None:
        """Replace the object with ``data`` in one request (atomic for readers)."""
        self.fs.pipe_file(self.key, data)

    def create_bytes(self, data: bytes) -> None:
        """Create the object; :class:`FileExistsError` if it exists (see :data:`ATOMIC_CREATE`)."""
        self.fs.pipe_file(self.key, data, mode="create")

    def unlink(self, missing_ok: bool = False) -> None:
        try:
            self.fs.rm_file(self.key)
        except FileNotFoundError:
            if not missing_ok:
                raise
