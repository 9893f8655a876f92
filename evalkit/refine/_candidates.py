"""Refine builds as candidates: the original built assistant refined once per feedback, each
result captured, the draft restored from its snapshot between builds and after the last.

The service refines only an assistant with build artifacts (E10 answers 404 for a clone), and
a build regenerates the draft's whole config. So each build runs on the original assistant,
its prompt is captured (what carries forward; the rest of a regenerated config is the brief's,
not a proposal), and the draft's config as it was before the first build is saved back (E3)
before the next build and at the end, on every path out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._util import PollPolicy
from ..api import AsyncClient
from ..store import StoreLike
from ..targets import ConfigSnapshot, SnapshotStore
from ._clients import find_assistant
from ._errors import RefineError
from ._refine import arefine_and_wait
from ._refine_options import RefineOptions

__all__ = ["RefinedCandidate", "refine_candidates"]

logger = logging.getLogger("evalkit.refine")


@dataclass(frozen=True)
class RefinedCandidate:
    """One build's outcome: the feedback sent and the prompt it produced (None: it failed,
    with the reason)."""

    feedback: str
    instructions: str | None
    build_id: str | None = None
    error: str | None = None


async def _restore(client: AsyncClient, assistant_id: str, config: dict[str, Any]) -> None:
    found = await find_assistant(client, assistant_id)
    if found.config.to_json() != config:
        await client.update_assistant(assistant_id, extra_body={"config": config})


async def refine_candidates(
    client: AsyncClient,
    assistant_id: str,
    feedbacks: Sequence[str],
    *,
    store: StoreLike = "runs",
    poll: PollPolicy | None = None,
    build_timeout: float | None = None,
) -> list[RefinedCandidate]:
    """One refine build per feedback on ``assistant_id`` (module docstring); a build that
    fails is reported in its candidate and the next one goes on."""
    found = await find_assistant(client, assistant_id)
    snapshot = ConfigSnapshot.from_assistant(found, source="optimize-before")
    SnapshotStore(store).save(snapshot)
    original = found.config.to_json()
    out: list[RefinedCandidate] = []
    try:
        for feedback in feedbacks:
            await _restore(client, assistant_id, original)
            try:
                result = await arefine_and_wait(
                    assistant_id,
                    feedback,
                    client=client,
                    store=store,
                    options=RefineOptions(timeout=build_timeout, poll=poll),
                )
            except RefineError as exc:
                logger.warning("refine build for a candidate failed: %s", exc)
                out.append(RefinedCandidate(feedback, None, error=str(exc)))
                continue
            out.append(RefinedCandidate(feedback, result.after.instructions, result.build_id))
    finally:
        await _restore(client, assistant_id, original)
    return out
