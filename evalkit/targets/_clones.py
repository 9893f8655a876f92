"""Who owns a temporary clone: run id, host, process and a lease, kept in its description.

A clone's description ends with a marker::

    [evalkit-owner run=<run_id> host=<host> pid=<pid> lease=<UTC time>]

The running run renews the lease with E3 (a partial update of ``description``) while it
lives. A clone's owner is *gone* when its lease has expired, or when it ran on this host and
its process no longer exists. Only clones whose owner is gone are leftovers; a clone of a
run still going elsewhere (a parallel CI shard) is left alone unless forced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from .._exceptions import EvalkitError
from ..api import Assistant, AsyncClient

__all__ = [
    "CLONE_DESCRIPTION",
    "CLONE_PREFIX",
    "CloneLease",
    "CloneOwner",
    "clone_owner",
    "find_clones",
    "is_clone",
    "owner_gone",
]

logger = logging.getLogger("evalkit.targets")

CLONE_PREFIX: Final = "evalkit-clone"
CLONE_DESCRIPTION: Final = "Temporary evalkit clone of"
_MARKER_RE: Final = re.compile(
    r"\[evalkit-owner run=(?P<run>\S*) host=(?P<host>\S*) pid=(?P<pid>\d+) lease=(?P<lease>\S+)\]"
)


@dataclass(frozen=True, slots=True)
class CloneLease:
    """How long a clone's lease lasts, and how often its run renews it."""

    duration_s: float = 600.0
    renew_every_s: float = 120.0


@dataclass(frozen=True, slots=True)
class CloneOwner:
    """The run that made a clone: its id, host, process id, and when its lease ends."""

    run_id: str
    host: str
    pid: int
    lease_until: datetime

    @classmethod
    def current(cls, run_id: str, lease: CloneLease, now: datetime | None = None) -> CloneOwner:
        """This process as the owner, with a fresh lease."""
        start = now or datetime.now(UTC)
        until = start + timedelta(seconds=lease.duration_s)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in run_id) or "-"
        return cls(safe, _hostname(), os.getpid(), until.replace(microsecond=0))

    def marker(self) -> str:
        """The text appended to the clone's description."""
        lease = self.lease_until.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"[evalkit-owner run={self.run_id} host={self.host} pid={self.pid} lease={lease}]"

    def description(self, assistant_id: str) -> str:
        """A clone's whole description, marker included."""
        return f"{CLONE_DESCRIPTION} {assistant_id}; deleted when the run ends. {self.marker()}"


def _hostname() -> str:
    return "".join(ch for ch in socket.gethostname() if not ch.isspace()) or "localhost"


def is_clone(assistant: Assistant) -> bool:
    """True for a temporary clone evalkit made (by name and description)."""
    return assistant.name.startswith(CLONE_PREFIX) and (assistant.description or "").startswith(
        CLONE_DESCRIPTION
    )


def clone_owner(assistant: Assistant) -> CloneOwner | None:
    """The owner recorded in a clone's description (``None`` for clones made before owners)."""
    found = _MARKER_RE.search(assistant.description or "")
    if found is None:
        return None
    try:
        lease = datetime.fromisoformat(found["lease"].replace("Z", "+00:00"))
    except ValueError:
        return None
    if lease.tzinfo is None:
        lease = lease.replace(tzinfo=UTC)
    return CloneOwner(found["run"], found["host"], int(found["pid"]), lease)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    except OSError:
        return False
    return True


def owner_gone(owner: CloneOwner | None, now: datetime | None = None) -> bool:
    """True when nothing will delete the clone: no owner recorded, lease expired, or its
    process (on this host) has exited."""
    if owner is None:
        return True
    if owner.lease_until <= (now or datetime.now(UTC)):
        return True
    return owner.host == _hostname() and not _pid_alive(owner.pid)


def find_clones(
    assistants: Sequence[Assistant], *, include_live: bool = False, now: datetime | None = None
) -> list[Assistant]:
    """evalkit's temporary clones among ``assistants`` whose owning run is gone.

    ``include_live=True`` lists every clone, those of runs still going too (``--force``).
    """
    clones = [a for a in assistants if is_clone(a)]
    if include_live:
        return clones
    return [a for a in clones if owner_gone(clone_owner(a), now)]


@contextlib.asynccontextmanager
async def lease_renewal(
    client: AsyncClient, clone_id: str, assistant_id: str, run_id: str, lease: CloneLease
) -> AsyncIterator[None]:
    """Renew the clone's lease every ``lease.renew_every_s`` while the block runs."""

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease.renew_every_s)
            owner = CloneOwner.current(run_id, lease)
            try:
                await client.update_assistant(clone_id, description=owner.description(assistant_id))
            except EvalkitError as exc:  # the next renewal tries again
                logger.warning("could not renew the lease of clone %s: %s", clone_id, exc)

    task = asyncio.create_task(renew(), name=f"evalkit-lease-{clone_id}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
