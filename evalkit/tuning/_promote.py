"""Promote a sweep's winner: its config written to the assistant's draft (E3), never published.

The spec shows E3 only sending ``public``; the config goes in ``extra_body`` (the emulator
accepts it, and a save bumps ``draft.version``). Before writing, the draft's version is read
again (E5): when it moved since the sweep started, the winner was measured against a config
that is no longer the draft, and promoting is refused. The winner's patch is applied to the
draft's config as the service returns it now, so credentials the sweep never saw stay as they
are; masked values in a patch (an unpickled variant) are dropped, never written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._exceptions import EvalkitError
from .._util import run_sync
from ..api import AsyncClient, Client, async_client
from ..targets import config_diff, merge_patch, strip_redacted_keys

if TYPE_CHECKING:
    from ._result import TuneResult

__all__ = ["PromoteError", "Promotion", "apromote", "promote"]

logger = logging.getLogger("evalkit.tuning")


class PromoteError(EvalkitError):
    """The winner cannot be promoted (no winner, no assistant, or the draft moved)."""


@dataclass(frozen=True)
class Promotion:
    """What promoting did (or would do, with ``dry_run``)."""

    assistant_id: str
    winner: str
    from_version: int
    to_version: int | None  # None: dry run
    diff: str

    def __str__(self) -> str:
        if self.to_version is None:
            return f"would write {self.winner} to the draft of {self.assistant_id} (v{self.from_version})"
        return (
            f"promoted {self.winner}: the draft of {self.assistant_id} moved from v"
            f"{self.from_version} to v{self.to_version} (not published)"
        )


async def apromote(result: TuneResult, client: AsyncClient, *, dry_run: bool = False) -> Promotion:
    """The async twin of :func:`promote`."""
    variant = result.winner_variant
    if variant is None or result.winner is None:
        raise PromoteError(
            "nothing to promote: the sweep has no confirmed winner"
            if result.winner is None
            else f"nothing to promote: {result.winner} has no variant (decided from grades alone)"
        )
    if variant.base != "draft":
        raise PromoteError(f"{variant.name} patches prod's config; promote patches the draft only")
    if result.assistant_id is None or result.draft_version is None:
        raise PromoteError("the result does not say which assistant and draft version it swept")
    meta = await client.get_assistant_metadata(result.assistant_id)
    now_version = int(meta.aliases.draft.version)
    if now_version != result.draft_version:
        raise PromoteError(
            f"the draft of {result.assistant_id} moved from version {result.draft_version} (when "
            f"the sweep started) to {now_version}: the winner was measured against a config that "
            "is no longer the draft. Run the sweep again on the current draft."
        )
    found = next((a for a in await client.list_assistants() if a.id == result.assistant_id), None)
    if found is None:
        raise PromoteError(f"assistant {result.assistant_id} is gone")
    current: dict[str, Any] = found.config.to_json()
    updated: dict[str, Any] = merge_patch(current, strip_redacted_keys(dict(variant.patch)))
    diff = config_diff(current, updated, variant.name)
    logger.info("promoting %s to the draft of %s:\n%s", variant.name, result.assistant_id, diff)
    if dry_run:
        return Promotion(result.assistant_id, variant.name, now_version, None, diff)
    await client.update_assistant(result.assistant_id, extra_body={"config": updated})
    after = await client.get_assistant_metadata(result.assistant_id)
    return Promotion(
        result.assistant_id, variant.name, now_version, int(after.aliases.draft.version), diff
    )


def promote(
    result: TuneResult, client: Client | AsyncClient | None = None, *, dry_run: bool = False
) -> Promotion:
    """Write ``result``'s winner config to the assistant's draft (module docstring)."""

    async def go() -> Promotion:
        async with async_client(client) as aclient:
            return await apromote(result, aclient, dry_run=dry_run)

    return run_sync(go)
