"""One writer per run at a URL: numbered writer epochs, each claimed by a conditional create.

An object store has no lock that dies with its process, so a run at a URL is taken, not
locked: opening a writer creates ``writers/<epoch>.json`` with the next free number, as a
conditional create (``If-None-Match: *`` on S3), so of two writers opening at once exactly
one gets each number and the other is refused. A writer whose epoch is no longer the newest
has been taken over (a resume on another machine, e.g. after its runner was killed): it
finds out at its next commit check (at most :data:`CHECK_EVERY` seconds apart) and at
finalize, and stops with :class:`RunLockedError`; everything it recorded before stays, and
journal objects carry their epoch, so two writers never overwrite each other's lines.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import TYPE_CHECKING, Final

from .._util import now_iso
from ._errors import RunLockedError

if TYPE_CHECKING:
    from ._remote import RemotePath

__all__ = ["CHECK_EVERY", "WRITERS_DIR", "WriterLease"]

WRITERS_DIR: Final = "writers"
CHECK_EVERY: Final = 2.0  # seconds between checks that no newer writer took the run over


def _epoch_name(epoch: int) -> str:
    return f"{epoch:06d}.json"


class WriterLease:
    """This writer's epoch of a run at a URL; :meth:`check` refuses once a newer one exists."""

    def __init__(self, run_path: RemotePath, epoch: int) -> None:
        self.run_path = run_path
        self.epoch = epoch
        self._checked = time.monotonic()

    @classmethod
    def claim(cls, run_path: RemotePath) -> WriterLease:
        """Take the next epoch; :class:`RunLockedError` if another writer took it first."""
        folder = run_path / WRITERS_DIR
        taken = [int(name.split(".")[0]) for name in folder.sizes() if name[:6].isdigit()]
        epoch = max(taken, default=0) + 1
        note = {"epoch": epoch, "host": socket.gethostname(), "pid": os.getpid()}
        note["opened_at"] = now_iso("auto")
        try:
            (folder / _epoch_name(epoch)).create_bytes(json.dumps(note).encode("utf-8"))
        except FileExistsError:
            raise RunLockedError(
                f"{run_path}: another writer opened this run at the same moment (epoch {epoch}); "
                "one writer per run: let it finish, or open the run again to take it over",
                run_path,
            ) from None
        return cls(run_path, epoch)

    def check(self, *, now: bool = False) -> None:
        """:class:`RunLockedError` if a newer writer has taken the run over (checked at most
        every :data:`CHECK_EVERY` seconds unless ``now``)."""
        clock = time.monotonic()
        if not now and clock - self._checked < CHECK_EVERY:
            return
        self._checked = clock
        newer = self.run_path / WRITERS_DIR / _epoch_name(self.epoch + 1)
        if newer.exists():
            raise RunLockedError(
                f"{self.run_path}: another writer took this run over (epoch {self.epoch + 1}, "
                f"this writer is epoch {self.epoch}); what this writer recorded is kept",
                self.run_path,
            )
