"""``refine_and_wait``: one refine build (E10), driven safely and measured.

The service's refine is a blind tool: 200 only says a build began, a second build in flight is
accepted and failed silently, the build takes minutes, and on finish the name and whole config
are regenerated from the brief (only the prompt carries forward, with the feedback). So:

1. the feedback is checked (a string, at most 2000 characters) before anything is sent;
2. preflight: the assistant exists (E1); a build evalkit recorded as in flight for it refuses
   the call (naming it), or is waited for with ``wait_for_inflight=True``;
3. a snapshot of the config before; the build is recorded in flight, then submitted;
4. the wait polls E5 until ``aliases.draft.version`` moves past the version before. Terminal
   states: succeeded (it moved) and timed out. A failed build is not observable through the
   spec except by the version never moving, so it ends as a timeout; the record then stays,
   and the next call finds it;
5. the new config is read (E1), snapshotted, and compared with the old one.

Limits: the version moves on any save, so a manual save during the build ends the wait early
(the "after" config is then that save). The brief replacement travels as ``extra_body``
``{"brief": ...}``, the emulator's field name: the spec does not show the real one.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from .._util import PollPolicy, apoll, now_iso, run_sync
from ..api import ApiError, AssistantMetadata, AsyncClient, NotFoundError
from ..store import StoreLike, local_folder
from ..targets import PROMPT_PATH, ConfigSnapshot, SnapshotStore, config_edits, prompt_diff
from ._clients import AnyClient, async_client, find_assistant
from ._errors import BuildInFlightError, RefineError, RefineTimeout
from ._feedback import validate_feedback
from ._inflight import InFlightBuild, InFlightLedger
from ._refine_options import RefineOptions, Sleep
from ._result import RefineResult

__all__ = ["BRIEF_FIELD", "arefine_and_wait", "refine_and_wait"]

logger = logging.getLogger("evalkit.refine")

BRIEF_FIELD: Final = "brief"
"""The body field that replaces the stored brief: the emulator's name (the spec hides it)."""
_NO_ARTIFACTS: Final = "no build artifacts"


def _moved_past(
    client: AsyncClient, assistant_id: str, version: int
) -> Callable[[], Awaitable[tuple[Any, AssistantMetadata]]]:
    async def check() -> tuple[Any, AssistantMetadata]:
        meta = await client.get_assistant_metadata(assistant_id)
        return ("succeeded" if meta.aliases.draft.version > version else "pending"), meta

    return check


async def _settle_recorded(
    client: AsyncClient,
    ledger: InFlightLedger,
    assistant_id: str,
    wait: bool,
    wait_with: tuple[PollPolicy, Sleep],
) -> None:
    """Clear a recorded build that has finished; refuse, or wait for, one still in flight."""
    with ledger.locked(assistant_id):
        record = ledger.read(assistant_id)
    if record is None:
        return
    check = _moved_past(client, assistant_id, record.version_before)
    state, meta = await check()
    if state == "pending":
        if not wait:
            raise BuildInFlightError(
                f"refusing to start a refine: {record.describe()} is still in flight (the "
                f"draft is still version {meta.aliases.draft.version}); the service would "
                "accept a second build and fail it silently. Wait for it "
                "(RefineOptions(wait_for_inflight=True)), or delete "
                f"{ledger.path(assistant_id)} if you know it failed"
            )
        logger.info("waiting for %s", record.describe())
        policy, sleep = wait_with
        outcome = await apoll(check, policy, sleep=sleep)
        if outcome.state != "succeeded":
            raise RefineTimeout(
                f"{record.describe()} was still in flight after {outcome.waited_s:.0f} s; "
                "it stays recorded",
                record.build_id,
            )
    logger.info("recorded %s has finished; clearing it", record.describe())
    with ledger.locked(assistant_id):
        ledger.clear(assistant_id, record.build_id)


def _claim(ledger: InFlightLedger, record: InFlightBuild) -> None:
    with ledger.locked(record.assistant_id):
        current = ledger.read(record.assistant_id)
        if current is not None:
            raise BuildInFlightError(
                f"refusing to start a refine: {current.describe()} is in flight (recorded by "
                "another caller just now)"
            )
        ledger.write(record)


async def _submit(
    client: AsyncClient,
    ledger: InFlightLedger,
    record: InFlightBuild,
    feedback: str,
    brief: Mapping[str, Any] | None,
) -> InFlightBuild:
    """Claim the assistant, send E10, record the build id.

    The claim is undone when the service answers an error (no build started); after a broken
    connection it stays (a build may have started), without an id.
    """
    _claim(ledger, record)
    extra = None if brief is None else {BRIEF_FIELD: dict(brief)}
    try:
        started = await client.refine(record.assistant_id, feedback, extra_body=extra)
    except ApiError as exc:  # the service answered: no build started
        with ledger.locked(record.assistant_id):
            ledger.clear(record.assistant_id, "")
        if isinstance(exc, NotFoundError) and _NO_ARTIFACTS in str(exc).lower():
            raise RefineError(
                f"assistant {record.assistant_id} cannot be refined: only built assistants "
                "(made by a build, with build artifacts) can be refined, and this one was "
                "created by hand or through the API (the service answered 404 "
                "'Assistant has no build artifacts to refine')"
            ) from exc
        raise
    submitted = replace(record, build_id=started.build_id, started_at=now_iso())
    with ledger.locked(record.assistant_id):
        ledger.write(submitted)
    logger.info("submitted refine build %s of %s", started.build_id, record.assistant_id)
    return submitted


async def arefine_and_wait(
    assistant_id: str,
    owner_feedback: str,
    *,
    client: AnyClient | None = None,
    store: StoreLike = "runs",
    options: RefineOptions | None = None,
) -> RefineResult:
    """Refine ``assistant_id``'s prompt with ``owner_feedback`` and wait for the build.

    ``options`` (a :class:`RefineOptions`): ``timeout`` (seconds; default ``poll.timeout``,
    else 900) bounds the wait, ``poll`` (a :class:`~evalkit.PollPolicy`) paces it, ``brief``
    replaces the stored build brief for this and later builds (the whole brief),
    ``wait_for_inflight`` waits for a recorded build still in flight instead of refusing,
    ``sleep`` replaces ``asyncio.sleep`` (tests). ``store`` holds the snapshots and the
    in-flight record (``<store>/.refine``); for a store at a URL (``s3://...``) the snapshots
    are in the bucket and the in-flight record stays on this machine
    (:func:`evalkit.store.local_folder`), so the in-flight guard covers builds started from
    this machine. ``client`` defaults to one configured from the environment.

    Raises :class:`~evalkit.InvalidRequestError` (feedback; nothing sent),
    :class:`BuildInFlightError` (a recorded build is in flight), :class:`RefineError` (unknown
    or hand-made assistant) and :class:`RefineTimeout` (the build id stays recorded).
    """
    feedback = validate_feedback(owner_feedback)
    opts = options or RefineOptions()
    policy = opts.policy
    waiter: Sleep = opts.sleep or asyncio.sleep
    brief = opts.brief
    wait_for_inflight = opts.wait_for_inflight
    ledger = InFlightLedger(local_folder(store))  # a URL store keeps it on this machine
    snapshots = SnapshotStore(store)
    async with async_client(client) as aclient:
        await find_assistant(aclient, assistant_id)
        await _settle_recorded(aclient, ledger, assistant_id, wait_for_inflight, (policy, waiter))
        found = await find_assistant(aclient, assistant_id)
        before = ConfigSnapshot.from_assistant(found, source="refine-before")
        snapshots.save(before)
        raw_before = found.config.to_json()
        record = InFlightBuild(assistant_id, "", now_iso(), before.version, os.getpid())
        record = await _submit(aclient, ledger, record, feedback, brief)
        outcome = await apoll(
            _moved_past(aclient, assistant_id, before.version), policy, sleep=waiter
        )
        if outcome.state != "succeeded":
            raise RefineTimeout(
                f"refine build {record.build_id} of assistant {assistant_id} did not finish "
                f"within {policy.timeout:g} s ({outcome.polls} polls; the draft is still "
                f"version {before.version}). A failed build looks the same through the "
                f"service's interface. It stays recorded in {ledger.path(assistant_id)}; the "
                "next refine refuses until it finishes (or waits with "
                "RefineOptions(wait_for_inflight=True))",
                record.build_id,
            )
        after_found = await find_assistant(aclient, assistant_id)
        after = ConfigSnapshot.from_assistant(after_found, source="refine-after")
        snapshots.save(after)
        with ledger.locked(assistant_id):
            ledger.clear(assistant_id, record.build_id)
    edits = config_edits(
        raw_before, after_found.config.to_json(), names=(found.name, after_found.name)
    )
    logger.info(
        "refine build %s: v%d -> v%d, %d path(s) besides %s overwritten",
        record.build_id,
        before.version,
        after.version,
        len(edits),
        PROMPT_PATH,
    )
    return RefineResult(
        assistant_id=assistant_id,
        build_id=record.build_id,
        before=before,
        after=after,
        prompt_diff=prompt_diff(
            before.instructions,
            after.instructions,
            version_before=before.version,
            version_after=after.version,
        ),
        overwritten=edits,
        waited_s=outcome.waited_s,
        polls=outcome.polls,
        _before_config=raw_before,
        _client=client,
    )


def refine_and_wait(
    assistant_id: str,
    owner_feedback: str,
    *,
    client: AnyClient | None = None,
    store: StoreLike = "runs",
    options: RefineOptions | None = None,
) -> RefineResult:
    """Sync :func:`arefine_and_wait` (works inside Jupyter's running loop)."""
    return run_sync(
        lambda: arefine_and_wait(
            assistant_id, owner_feedback, client=client, store=store, options=options
        )
    )
