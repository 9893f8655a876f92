"""Errors of the run store; every message names the file or folder concerned.

Exception tree (under ``evalkit.EvalkitError``)::

    StoreError
    ├── RunNotFoundError        no run folder / no manifest.json (also a FileNotFoundError)
    ├── RunExistsError          create() on a folder that already holds a run
    ├── IdentityMismatchError   resume with a different run identity hash
    ├── RunLockedError          another writer has the run open
    └── CorruptRunError         unreadable manifest, journal or table

An ``OSError`` met while writing (a full disk, a read-only store, a store path that is a file)
becomes a plain :class:`StoreError` through :func:`storage_error`, naming the path, the cause
and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import EvalkitError

if TYPE_CHECKING:
    from ._urls import StoreLike


__all__ = [
    "CorruptRunError",
    "IdentityMismatchError",
    "RunExistsError",
    "RunLockedError",
    "RunNotFoundError",
    "StoreError",
    "storage_error",
    "storage_errors",
]

#: What to do about a failed write, by errno.
_HINTS: dict[int, str] = {
    errno.ENOSPC: "the disk is full; free some space, then run again with the same run_id "
    "(finished conversations are kept)",
    errno.EDQUOT: "the disk quota is exhausted; free some space, then run again with the same "
    "run_id (finished conversations are kept)",
    errno.EROFS: "the file system is read-only; use another store folder",
    errno.EACCES: "no permission to write there; use another store folder",
    errno.EPERM: "no permission to write there; use another store folder",
    errno.ENOTDIR: "a part of the store path is a file, not a folder",
    errno.EEXIST: "a file is in the way of a folder of the store",
}


def _is_url(path: object) -> bool:
    return isinstance(path, str) and "://" in path and not path.startswith("file://")


class StoreError(EvalkitError):
    """A run folder cannot be used as asked."""

    def __init__(self, message: str, path: StoreLike | None = None) -> None:
        # a URL stays a string (a RemotePath holds its filesystem, which may hold credentials)
        self.path: Path | str | None = None
        if isinstance(path, os.PathLike) or (isinstance(path, str) and not _is_url(path)):
            self.path = Path(path)
        elif path is not None:
            self.path = str(path)
        super().__init__(message)


class RunNotFoundError(StoreError, FileNotFoundError):
    """No run at the given path or id."""


class RunExistsError(StoreError, FileExistsError):
    """``RunWriter.create`` found a run already in the folder."""


class IdentityMismatchError(StoreError):
    """The stored run was made from a different definition (grid, assistant, target, ...)."""

    def __init__(self, path: StoreLike, stored: str, requested: str, detail: str = "") -> None:
        self.stored = stored
        self.requested = requested
        self.detail = detail
        what = f": {detail}" if detail else " (its grid, assistant or target changed)"
        super().__init__(
            f"run folder {path} holds a different run{what}. Use a new run_id, or delete the "
            "folder to start over.",
            path,
        )


class RunLockedError(StoreError):
    """Another RunWriter (in this or another process) has the run open for writing."""


class CorruptRunError(StoreError):
    """A manifest, journal or table in the run folder cannot be read."""


def storage_error(exc: OSError, path: StoreLike, doing: str) -> StoreError:
    """A :class:`StoreError` for ``exc`` met while ``doing`` (``"write"``...) ``path``."""
    if isinstance(exc, StoreError):
        return exc
    code = errno.errorcode.get(exc.errno or 0)
    reason = exc.strerror or str(exc) or type(exc).__name__
    cause = f"{reason} ({code})" if code and code not in reason else reason
    hint = _HINTS.get(exc.errno or 0)
    error = StoreError(f"cannot {doing} {path}: {cause}" + (f"; {hint}" if hint else ""), path)
    error.__cause__ = exc
    return error


@contextlib.contextmanager
def storage_errors(path: StoreLike, doing: str) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into a :class:`StoreError` (see above)."""
    try:
        yield
    except StoreError:
        raise
    except OSError as exc:
        raise storage_error(exc, path, doing) from exc
