"""A resumed sweep or search deletes the clones its killed predecessor left behind.

A run deletes its clone on every way out but one: a process killed outright (SIGKILL, a lost
machine) cannot. The clone's description names its run and owner (:mod:`evalkit.targets`), so
a sweep or search started again with the same run prefix finds the clones of its own runs
(``<prefix>-...``) whose owner is gone (its process exited, or its lease ran out) and deletes
them before it runs anything. Clones of other runs, and of runs of this prefix still alive
elsewhere, are left alone (``evalkit clones`` lists those).
"""

from __future__ import annotations

import logging

from .._exceptions import EvalkitError
from ..api import AsyncClient, NotFoundError
from ..targets import CloneLease, CloneOwner, clone_owner, find_clones

__all__ = ["reap_orphans"]

logger = logging.getLogger("evalkit.tuning")


def _owner_prefix(prefix: str) -> str:
    """The run-id prefix as a clone's owner marker spells it (unsafe characters as ``-``)."""
    return CloneOwner.current(f"{prefix}-", CloneLease()).run_id


async def reap_orphans(client: AsyncClient, prefix: str) -> list[str]:
    """Delete the clones of this prefix's runs whose owner is gone; their ids."""
    mine = _owner_prefix(prefix)
    orphans = [
        clone
        for clone in find_clones(await client.list_assistants())
        if (owner := clone_owner(clone)) is not None and owner.run_id.startswith(mine)
    ]
    deleted = []
    for clone in orphans:
        owner = clone_owner(clone)
        try:
            await client.delete_assistant(clone.id)
        except NotFoundError:
            continue
        except EvalkitError as exc:
            logger.warning("could not delete the orphaned clone %s: %s", clone.id, exc)
            continue
        deleted.append(clone.id)
        logger.info(
            "deleted clone %s left by run %s (its process is gone)",
            clone.id,
            owner.run_id if owner else "?",
        )
    return deleted
