"""Errors of the run store; every message names the file or folder concerned.

Exception tree (under ``evalkit.EvalkitError``)::

    StoreError
    ├── RunNotFoundError        no run folder / no manifest.json (also a FileNotFoundError)
    ├── RunExistsError          create() on a folder that already holds a run
    ├── IdentityMismatchError   resume with a different run identity hash
    ├── RunLockedError          another writer has the run open
    └── CorruptRunError         unreadable manifest, journal or table
"""

from __future__ import annotations

from pathlib import Path

from .._exceptions import EvalkitError

__all__ = [
    "CorruptRunError",
    "IdentityMismatchError",
    "RunExistsError",
    "RunLockedError",
    "RunNotFoundError",
    "StoreError",
]


class StoreError(EvalkitError):
    """A run folder cannot be used as asked."""

    def __init__(self, message: str, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        super().__init__(message)


class RunNotFoundError(StoreError, FileNotFoundError):
    """No run at the given path or id."""


class RunExistsError(StoreError, FileExistsError):
    """``RunWriter.create`` found a run already in the folder."""


class IdentityMismatchError(StoreError):
    """The stored run was made from a different definition (grid, assistant, target, ...)."""

    def __init__(self, path: Path, stored: str, requested: str, detail: str = "") -> None:
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
