"""Atomic file replacement: write a temp file in the same folder, fsync it, rename it over.

Readers see either the old file or the new one, never a partial file. A crash can leave a temp
file behind; temp names start with ``.`` and end with ``.tmp``, so globs such as ``*.parquet``
never match them, and :func:`remove_stale_temps` clears them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

__all__ = ["TEMP_SUFFIX", "atomic_write", "atomic_write_bytes", "fsync_dir", "remove_stale_temps"]

TEMP_SUFFIX = ".tmp"


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file inside ``path`` durable (no-op where unsupported)."""
    if os.name == "nt":  # directories cannot be opened on Windows
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_path_for(target: Path) -> Path:
    """A fresh temp path next to ``target`` that no glob for ``target``'s suffix matches."""
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")


def atomic_write(target: Path, write: Callable[[Path], None], *, durable: bool = True) -> None:
    """Call ``write(temp_path)``, then rename the temp file over ``target``.

    With ``durable`` the temp file and the folder are fsync'd, so the new content survives a
    power cut once this returns. On any error the temp file is removed and ``target`` is intact.
    """
    tmp = temp_path_for(target)
    try:
        write(tmp)
        if durable:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        fsync_dir(target.parent)


def atomic_write_bytes(target: Path, data: bytes, *, durable: bool = True) -> None:
    """Atomically replace ``target`` with ``data``."""

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    atomic_write(target, write, durable=durable)


def remove_stale_temps(folder: Path) -> list[Path]:
    """Delete temp files a crashed writer left in ``folder``; returns what was removed.

    Only call this while holding the folder's writer lock (no live writer owns them).
    """
    removed = []
    for path in folder.glob(f".*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed
