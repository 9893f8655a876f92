"""Run a grid of simulated conversations against an assistant, and record every one.

An asyncio core: each conversation is a cheap coroutine, ``concurrency`` workers bound how many
streams are open at once, the client's retry policy handles requests, and a dropped stream is
re-run as a new conversation (``max_attempts``; the spec has no resume). Each finished
conversation is appended to the run's journal at once, so a run killed at any moment resumes
with nothing lost and nothing duplicated: re-running with the same ``run_id`` skips what is
recorded. Ctrl-C or cancellation closes every open stream (the service stops spending),
writes what finished and deletes temporary clones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from .. import _version
from .._exceptions import EvalkitError
from .._util import Progress, run_sync
from ..api import (
    ApiConnectionError,
    ApiError,
    AsyncClient,
    AuthenticationError,
    Client,
    ConfigurationError,
    Done,
    InvalidRequestError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    StreamDropped,
    UnexpectedResponseError,
)
from ..grid import ConversationSlot, Grid
from ..store import (
    ConversationRecord,
    IdentityMismatchError,
    Run,
    RunWriter,
    TurnRecord,
    dump_variables,
    identity_hash,
    transcript_hash,
)
from ..targets import ResolvedTarget, SnapshotStore, Target, resolve_target, simulation_target

logger = logging.getLogger("evalkit.runner")

#: Errors that mean every conversation would fail the same way: the run stops (nothing recorded
#: for the conversations not yet finished, so a resume after the fix runs them).
FATAL_ERRORS = (
    AuthenticationError,
    PermissionDeniedError,
    PaymentRequiredError,
    NotFoundError,
    ConfigurationError,
)


class RunAborted(EvalkitError):
    """The run stopped early because of an error no retry would fix; finished work was kept."""


@dataclass(frozen=True)
class Budget:
    """Limits on one invocation: conversations started, and wall-clock seconds.

    When ``max_seconds`` passes, open conversations are cancelled (not recorded) and the run
    is finalised as partial; resume it later with the same ``run_id``.
    """

    max_conversations: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_conversations is not None and self.max_conversations < 0:
            raise ValueError(f"Budget.max_conversations must be >= 0, got {self.max_conversations}")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError(f"Budget.max_seconds must be > 0, got {self.max_seconds}")


def default_run_id(label: str) -> str:
    """``YYYYmmdd-HHMMSS-<target>-<4 hex>``: sortable and unique enough for one machine."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in label)[:32]
    return f"{stamp}-{safe}-{secrets.token_hex(2)}"


def run_grid(
    grid: Grid,
    assistant_id: str,
    client: Client | AsyncClient | None = None,
    target: Target = "draft",
    store: str | Path = "runs",
    run_id: str | None = None,
    concurrency: int = 8,
    *,
    budget: Budget | None = None,
    max_attempts: int = 3,
    progress: bool | None = None,
    rerun: tuple[str, ...] = (),
) -> Run:
    """Run every conversation of ``grid`` against ``assistant_id`` and return the stored :class:`Run`.

    Works in scripts and inside Jupyter's running event loop. See :func:`arun_grid`.
    """
    return run_sync(
        lambda: arun_grid(
            grid,
            assistant_id,
            client,
            target,
            store,
            run_id,
            concurrency,
            budget=budget,
            max_attempts=max_attempts,
            progress=progress,
            rerun=rerun,
        )
    )


async def arun_grid(
    grid: Grid,
    assistant_id: str,
    client: Client | AsyncClient | None = None,
    target: Target = "draft",
    store: str | Path = "runs",
    run_id: str | None = None,
    concurrency: int = 8,
    *,
    budget: Budget | None = None,
    max_attempts: int = 3,
    progress: bool | None = None,
    rerun: tuple[str, ...] = (),
) -> Run:
    """The async twin of :func:`run_grid`.

    ``client`` defaults to an :class:`~evalkit.AsyncClient` configured from the environment (a
    sync :class:`~evalkit.Client` is mirrored). ``target`` is ``"draft"``, ``"prod"`` or a
    :class:`~evalkit.Variant`. Re-running with the same ``run_id`` resumes: recorded
    conversations are kept, the rest run, nothing is duplicated; a changed grid, assistant
    version or target is refused. ``rerun=("failed", "dropped")`` also runs again the recorded
    conversations with those statuses (the new record replaces the old one).
    """
    unknown = set(rerun) - {"done", "error", "dropped", "failed"}
    if unknown:
        raise ValueError(f"rerun takes statuses done/error/dropped/failed, got {sorted(unknown)}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    budget = budget or Budget()
    owned = not isinstance(client, AsyncClient)
    aclient = _as_async_client(client)
    try:
        try:
            resolved = await resolve_target(aclient, assistant_id, target, SnapshotStore(store))
        except FATAL_ERRORS as exc:
            raise RunAborted(f"run not started: {exc}") from exc
        _warn_if_clone_lacks_inputs(grid, resolved)
        run_id = run_id or default_run_id(resolved.label)
        manifest = _manifest(grid, resolved, aclient, run_id)
        try:
            writer = RunWriter.open(store, run_id, manifest)
        except IdentityMismatchError as exc:
            path = Path(store) / run_id
            detail = _what_changed(path, manifest)
            raise IdentityMismatchError(path, exc.stored, exc.requested, detail) from None
        keep = writer.finished
        if rerun:
            keep = frozenset(
                cid for cid, rec in writer.records().items() if rec.status not in rerun
            )
        pending = [s for s in grid.conversations() if s.conversation_id not in keep]
        if budget.max_conversations is not None:
            pending = pending[: budget.max_conversations]
        logger.info(
            "run %s: %d conversation(s) in the grid, %d recorded, %d to run now",
            run_id,
            len(grid),
            len(writer.finished),
            len(pending),
        )
        outcome = "complete"
        try:
            if pending:
                async with (
                    simulation_target(aclient, resolved) as simulate_id,
                    _stream_client(aclient, concurrency) as streams,
                ):
                    conversation = _Conversation(
                        streams, simulate_id, resolved, run_id, max_attempts
                    )
                    label = f"{resolved.label} {run_id}"
                    with Progress(len(grid), len(keep), label, progress) as bar:
                        outcome = await _run_all(
                            conversation, pending, writer, bar, concurrency, budget
                        )
        except BaseException:
            writer.finalize({"outcome": "interrupted", "finished_at": _now()})
            raise
        if len(writer.finished) < len(grid) and outcome == "complete":
            outcome = "partial"
        return writer.finalize({"outcome": outcome, "finished_at": _now()})
    finally:
        if owned:
            await aclient.aclose()


# --------------------------------------------------------------------------- internals


def _as_async_client(client: Client | AsyncClient | None) -> AsyncClient:
    if isinstance(client, AsyncClient):
        return client
    if isinstance(client, Client):
        return AsyncClient.from_client(client)
    return AsyncClient()


@contextlib.asynccontextmanager
async def _stream_client(client: AsyncClient, concurrency: int) -> AsyncIterator[AsyncClient]:
    """A client for the run's streams: the same settings, a fresh pool sized to ``concurrency``.

    A fresh pool matters at high concurrency: a burst of requests queued behind a pool that
    already holds an idle connection starts in waves instead of at once. A client built on a
    custom transport (a proxy, a test double) is used as it is.
    """
    if client.custom_transport:
        yield client
        return
    room = concurrency + 8
    limits = httpx.Limits(
        max_connections=room, max_keepalive_connections=room, keepalive_expiry=30.0
    )
    streams = AsyncClient.from_client(client, limits=limits)
    try:
        yield streams
    finally:
        await streams.aclose()


_IDENTITY_PARTS = (
    "assistant_id",
    "target",
    "assistant_version",
    "base_url_host",
    "variant",
    "grid",
)


def _what_changed(path: Path, manifest: dict[str, Any]) -> str:
    """Which identifying parts of a run differ between its stored manifest and ``manifest``."""
    try:
        stored = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "the stored manifest cannot be read"
    changed = [
        f"{key}: was {_short(stored.get(key))}, now {_short(manifest.get(key))}"
        for key in _IDENTITY_PARTS
        if stored.get(key) != manifest.get(key)
    ]
    return "; ".join(changed) or "no identifying field differs in the manifest"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _warn_if_clone_lacks_inputs(grid: Grid, resolved: ResolvedTarget) -> None:
    if not resolved.needs_clone:
        return
    missing = sum(1 for c in grid.cells() if c.context is None or c.variables is None)
    if missing:
        logger.warning(
            "target %s runs on a temporary clone, which has no stored build brief: %d cell(s) "
            "pass no context or no variables, so they will not fall back to the brief as the "
            "original assistant's would; give the grid contexts and variables for a fair comparison",
            resolved.label,
            missing,
        )


def _manifest(
    grid: Grid, resolved: ResolvedTarget, client: AsyncClient, run_id: str
) -> dict[str, Any]:
    grid_definition = grid.definition()
    definition = {"grid": grid_definition, "target": resolved.definition(), "host": client.host}
    return {
        "run_id": run_id,
        "identity": identity_hash(definition),
        "evalkit_version": _version.__version__,
        "base_url_host": client.host,
        "assistant_id": resolved.assistant_id,
        "target": resolved.label,
        "assistant_version": resolved.version,
        "config_snapshot": resolved.snapshot.to_json(),
        "variant": resolved.variant.definition() if resolved.variant else None,
        "on_clone": resolved.needs_clone,
        "grid": grid_definition,
        "n_conversations": len(grid),
        "created_at": _now(),
    }


async def _run_all(
    conversation: _Conversation,
    pending: list[ConversationSlot],
    writer: RunWriter,
    bar: Progress,
    concurrency: int,
    budget: Budget,
) -> str:
    slots: Iterator[ConversationSlot] = iter(pending)

    async def worker() -> None:
        for slot in slots:  # shared iterator: each slot is taken by exactly one worker
            record, turns = await conversation.run(slot)
            await writer.aappend(record, turns)
            bar.update(record.status)

    workers = min(concurrency, len(pending))
    try:
        async with asyncio.timeout(budget.max_seconds):
            try:
                async with asyncio.TaskGroup() as group:
                    for _ in range(workers):
                        group.create_task(worker())
            except* FATAL_ERRORS as group_error:
                first = group_error.exceptions[0]
                raise RunAborted(
                    f"run stopped: {first} (every conversation would fail the same way; finished "
                    "ones are kept, resume with the same run_id once fixed)"
                ) from first
    except TimeoutError:
        logger.warning(
            "wall-time budget of %ss reached; open conversations were cancelled", budget.max_seconds
        )
        return "partial"
    return "complete"


class _Conversation:
    """Runs one planned conversation to a final status, re-running dropped streams."""

    def __init__(
        self,
        client: AsyncClient,
        simulate_id: str,
        resolved: ResolvedTarget,
        run_id: str,
        max_attempts: int,
    ) -> None:
        self.client = client
        self.simulate_id = simulate_id
        self.resolved = resolved
        self.run_id = run_id
        self.max_attempts = max_attempts

    async def run(self, slot: ConversationSlot) -> tuple[ConversationRecord, list[TurnRecord]]:
        cell = slot.cell
        kwargs = cell.simulate_kwargs()
        started_at = datetime.now(UTC)
        attempts = 0
        first_turn_s: float | None = None
        persona_id: str | None = None
        status: str
        message: str | None
        turns: list[TurnRecord]
        while True:
            attempts += 1
            t0 = time.monotonic()
            try:
                transcript = await self.client.simulate(self.simulate_id, **kwargs).collect()
            except StreamDropped as exc:
                if attempts < self.max_attempts:
                    logger.info(
                        "conversation %s dropped (%s); running it again", slot.conversation_id, exc
                    )
                    await asyncio.sleep(min(0.25 * attempts, 2.0))
                    continue
                status, message, turns = "dropped", str(exc), _turn_records(exc.turns)
            except FATAL_ERRORS:
                raise
            except (
                ApiError,
                ApiConnectionError,
                UnexpectedResponseError,
                InvalidRequestError,
            ) as exc:
                status, message, turns = "failed", str(exc), []
            else:
                outcome = transcript.outcome
                first_turn_s = transcript.first_turn_s
                if isinstance(outcome, Done):
                    status, message = "done", None
                    persona_id = outcome.persona_id or None
                    turns = (
                        [TurnRecord(i, t.speaker, t.text) for i, t in enumerate(outcome.turns, 1)]
                        if outcome.turns
                        else _turn_records(transcript.turns)
                    )
                else:
                    status, message, turns = (
                        "error",
                        outcome.message,
                        _turn_records(transcript.turns),
                    )
            break
        record = ConversationRecord(
            run_id=self.run_id,
            conversation_id=slot.conversation_id,
            cell_id=cell.cell_id,
            repeat=slot.repeat,
            persona_label=cell.persona.label,
            variables=cell.variables_json or dump_variables(None),
            context=cell.context,
            status=status,  # type: ignore[arg-type]
            error_message=message,
            attempts=attempts,
            n_turns=len(turns),
            ended_by=turns[-1].role if turns else None,
            first_turn_s=first_turn_s,
            duration_s=time.monotonic() - t0,
            started_at=started_at,
            finished_at=datetime.now(UTC),
            transcript_hash=transcript_hash(turns) if turns else None,
            assistant_version=self.resolved.version,
            target=self.resolved.label,
            persona_id=persona_id,
        )
        return record, turns


def _turn_records(turns: Any) -> list[TurnRecord]:
    return [TurnRecord(t.index, t.role, t.text) for t in turns]
