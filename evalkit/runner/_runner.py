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
import logging
import secrets
import ssl
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from .._util import PlannedEnd, Progress, now, now_iso, progress_label, run_sync
from ..api import AsyncClient, Client, as_async_client
from ..grid import ConversationSlot, Grid
from ..store import (
    ConversationRecord,
    IdentityMismatchError,
    Run,
    RunWriter,
    StoreError,
    StoreLike,
    StoreUnreachableError,
    TurnRecord,
    open_store,
    read_stored_manifest,
    storage_error,
    unreachable_store,
)
from ..targets import ResolvedTarget, SnapshotStore, Target, resolve_target, simulation_target
from ._breaker import CircuitBreaker
from ._conversation import ConversationRunner
from ._definition import RunDefinition
from ._errors import FATAL_ERRORS, RunAborted, ServiceUnreachable
from ._options import RunOptions
from ._preflight import check_variables, log_lint
from ._pricing import Cost, llm_of
from ._signals import defer_sigint

__all__ = ["arun_grid", "default_run_id", "run_grid"]

logger = logging.getLogger("evalkit.runner")


def default_run_id(label: str) -> str:
    """``YYYYmmdd-HHMMSS-<target>-<4 hex>``: sortable and unique enough for one machine."""
    stamp = now().strftime("%Y%m%d-%H%M%S")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in label)[:32]
    return f"{stamp}-{safe}-{secrets.token_hex(2)}"


def run_grid(
    grid: Grid,
    assistant_id: str,
    target: Target = "draft",
    run_id: str | None = None,
    *,
    client: Client | AsyncClient | None = None,
    store: StoreLike = "runs",
    options: RunOptions | None = None,
) -> Run:
    """Run every conversation of ``grid`` against ``assistant_id`` and return the stored :class:`Run`.

    Works in scripts and inside Jupyter's running event loop. See :func:`arun_grid`.
    """
    return run_sync(
        lambda: arun_grid(
            grid, assistant_id, target, run_id, client=client, store=store, options=options
        )
    )


async def arun_grid(
    grid: Grid,
    assistant_id: str,
    target: Target = "draft",
    run_id: str | None = None,
    *,
    client: Client | AsyncClient | None = None,
    store: StoreLike = "runs",
    options: RunOptions | None = None,
) -> Run:
    """The async twin of :func:`run_grid`.

    What is run comes first: the ``grid``, the assistant, the ``target`` (``"draft"``,
    ``"prod"`` or a :class:`~evalkit.Variant`) and the ``run_id`` (None: one made from the
    target and the time). ``client`` defaults to an :class:`~evalkit.AsyncClient` configured
    from the environment (a sync :class:`~evalkit.Client` is mirrored); ``store`` is a folder
    or an fsspec URL. ``options`` (a :class:`RunOptions`) holds every runtime knob
    (concurrency, budget, attempts, progress, re-runs, pricing). Re-running with the same
    ``run_id`` resumes: recorded conversations
    are kept, the rest run, nothing is duplicated; a changed grid, assistant version or target
    is refused with what changed. ``RunOptions(rerun=("failed", "dropped"))`` also runs again
    the recorded conversations with those statuses (the new record replaces the old one).

    Before any conversation, the lint findings of the config the run uses are logged, and a
    ``{{token}}`` of its prompt without a value in some variables records refuses the run
    (:class:`~evalkit.runner.MissingVariablesError`, naming the tokens and records) unless
    ``RunOptions(allow_missing_variables=True)``.
    """
    opts = options or RunOptions()
    aclient, owned = as_async_client(client)
    try:
        snapshots = SnapshotStore(store)  # in the store: at a URL every machine reads them
        try:
            resolved = await resolve_target(aclient, assistant_id, target, snapshots)
        except FATAL_ERRORS as exc:
            raise RunAborted(f"run not started: {exc}") from exc
        except OSError as exc:  # the snapshot could not be written: a full or read-only store
            raise storage_error(exc, snapshots.root, "record a config snapshot in") from exc
        _warn_if_clone_lacks_inputs(grid, resolved)
        log_lint(resolved, aclient.said_once)
        check_variables(grid, resolved, opts.allow_missing_variables)
        if opts.budget.max_cost is not None:
            assert opts.pricing is not None  # RunOptions refuses max_cost without a table
            opts.pricing.require(run_llm(resolved))
        run_id = run_id or default_run_id(resolved.label)
        definition = RunDefinition.of(grid, resolved)
        with unreachable_store(store):
            writer = _open_writer(store, run_id, definition, resolved, aclient.host, len(grid))
        return await _run(writer, grid, aclient, resolved, opts)
    finally:
        if owned:
            await aclient.aclose()


def _open_writer(
    store: StoreLike,
    run_id: str,
    definition: RunDefinition,
    resolved: ResolvedTarget,
    host: str,
    n_conversations: int,
) -> RunWriter:
    manifest = definition.manifest(run_id, resolved, host, n_conversations)
    try:
        return RunWriter.open(store, run_id, manifest)
    except IdentityMismatchError as exc:
        path = open_store(store) / run_id
        stored = read_stored_manifest(path)
        changes = definition.changes_from(stored) if stored is not None else []
        detail = "; ".join(changes) or "the stored manifest does not say what"
        raise IdentityMismatchError(path, exc.stored, exc.requested, detail) from None


async def _run(
    writer: RunWriter, grid: Grid, client: AsyncClient, resolved: ResolvedTarget, opts: RunOptions
) -> Run:
    keep = writer.finished
    if opts.rerun:
        keep = frozenset(
            cid for cid, rec in writer.records().items() if rec.status not in opts.rerun
        )
    pending = [s for s in grid.conversations() if s.conversation_id not in keep]
    if opts.repeats is not None:
        pending = [s for s in pending if s.repeat < opts.repeats]
    if opts.budget.max_conversations is not None:
        pending = pending[: opts.budget.max_conversations]
    logger.info(
        "run %s: %d conversation(s) in the grid, %d recorded, %d to run now",
        writer.run_id,
        len(grid),
        len(writer.finished),
        len(pending),
    )
    outcome = "complete"
    try:
        if pending:
            async with (
                simulation_target(client, resolved, writer.run_id) as simulate_id,
                _stream_clients(client, min(opts.concurrency, len(pending))) as streams,
            ):
                runner = ConversationRunner(
                    client, simulate_id, resolved, writer.run_id, opts.max_attempts
                )
                label = progress_label(resolved.label, writer.run_id)
                planned = _planned_end(grid, opts, len(keep) + len(pending))
                with Progress(len(grid), len(keep), label, opts.progress, planned=planned) as bar:
                    outcome = await _run_all(runner, streams, pending, writer, bar, opts)
    except BaseException as exc:
        _finalize_after(writer, exc)
        raise
    if len(writer.finished) < len(grid) and outcome == "complete":
        outcome = "partial"
    extra: dict[str, Any] = {"outcome": outcome, "finished_at": now_iso()}
    if opts.pricing is not None:
        llm = run_llm(resolved)
        records = writer.records().values()
        spent = opts.pricing.conversations_cost(llm, ((r.duration_s, r.n_turns) for r in records))
        extra["cost"] = Cost(spent, 0.0, opts.pricing.currency).to_dict()
    return writer.finalize(extra)


def _planned_end(grid: Grid, opts: RunOptions, at: int) -> PlannedEnd | None:
    """Where this invocation means to stop short of the grid (the first waves of a tune or
    a sequential comparison, a conversation budget): its bar ends there as finished."""
    if at >= len(grid):
        return None
    if opts.repeats is not None and opts.repeats < grid.repeats:
        return PlannedEnd(at, f"first {opts.repeats} of {grid.repeats} repeats")
    return PlannedEnd(at, "conversation budget")


def _finalize_after(writer: RunWriter, error: BaseException) -> None:
    """Finalize a run that stopped on ``error``; a second Ctrl-C cannot cut it short.

    If finalizing fails too (the disk is still full), the writer is closed all the same, so a
    resume in this process is never refused as locked, and ``error`` carries a note saying so.
    """
    if isinstance(error, StoreUnreachableError):  # nothing more can be written there
        error.add_note(
            "the run was not finalized (the store is gone); its journal keeps what finished"
        )
        writer.close()
        return
    try:
        with defer_sigint():
            writer.finalize({"outcome": "interrupted", "finished_at": now_iso()})
    except Exception as exc:
        logger.error("run %s: could not finalize after %r: %s", writer.run_id, error, exc)
        error.add_note(f"the run was not finalized ({exc}); its journal keeps what finished")
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def _stream_clients(client: AsyncClient, slots: int) -> AsyncIterator[list[AsyncClient]]:
    """``slots`` clients for the run's streams, one per worker, each of one connection.

    Not one pool of ``slots`` connections: httpcore's pool scans every connection and every
    queued request each time a request starts or a response closes, so at 1000 streams each
    close costs milliseconds of CPU (the pool's bookkeeping was 44% of the client's CPU at
    concurrency 1000 with 10% dropped streams, and re-runs queued behind it). One connection
    per worker keeps that O(1); a slot's keep-alive connection (a dropped stream ends cleanly)
    serves its worker's next conversation. The slots share one SSL context (building one costs
    ~20 ms). A client on a custom transport (a proxy, a test double), or one that environment
    proxy variables route through a proxy, is shared by every worker as it is.
    """
    if client.custom_transport or _env_proxied(client.base_url):
        yield [client] * slots
        return
    verify = _ssl_context(client.base_url)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=30.0)
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for _ in range(slots):
            transport = httpx.AsyncHTTPTransport(verify=verify, limits=limits)
            slot = AsyncClient.from_client(client, transport=transport)
            clients.append(await stack.enter_async_context(slot))
        yield clients


def _ssl_context(base_url: str) -> ssl.SSLContext:
    """The slots' shared context: the default verifying one for https; for plain http (never
    used: redirects are off) a strict context without CA certificates, which is cheap to build."""
    if base_url.startswith("https:"):
        return httpx.create_ssl_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts nothing


def _env_proxied(base_url: str) -> bool:
    """Whether proxy environment variables apply to ``base_url`` (httpx honours them only for a
    client without a custom transport, so such a run keeps the caller's client)."""
    proxies = urllib.request.getproxies()
    scheme = base_url.partition(":")[0]
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    host = httpx.URL(base_url).host
    return not urllib.request.proxy_bypass(host)


def _warn_if_clone_lacks_inputs(grid: Grid, resolved: ResolvedTarget) -> None:
    """Warn when cells leave out what the original could fill in from its brief; a copy cannot.

    The service fills a missing ``context``, and missing ``variables``, from the brief stored
    when an assistant is built; a temporary copy has no brief. Only those cells can differ.
    """
    if not resolved.needs_clone:
        return
    cells = list(grid.cells())
    gaps = [
        f"{n} {'has' if n == 1 else 'have'} no {what}"
        for what, n in (
            ("context", sum(c.context is None for c in cells)),
            ("variables", sum(c.variables is None for c in cells)),
        )
        if n
    ]
    if gaps:
        logger.warning(
            "target %s runs on a temporary copy of assistant %s, and of the grid's %d cell(s), "
            "%s. If that assistant was built from a brief, it uses the brief's context and "
            "sample variables where a call gives none; the copy has no brief, so these calls "
            "differ from the assistant's own. Give the grid contexts= and variables= (CLI: "
            "--context, --variables) to compare like with like.",
            resolved.label,
            resolved.assistant_id,
            len(cells),
            " and ".join(gaps),
        )


async def _run_all(
    runner: ConversationRunner,
    streams: list[AsyncClient],
    pending: list[ConversationSlot],
    writer: RunWriter,
    bar: Progress,
    opts: RunOptions,
) -> str:
    slots: Iterator[ConversationSlot] = iter(pending)
    breaker = CircuitBreaker(opts.stop_after_unreachable, len(streams), runner.client.base_url)
    spend = _Spend(opts, run_llm(runner.resolved))

    async def record(finished: list[tuple[ConversationRecord, list[TurnRecord]]]) -> None:
        for conversation, turns in finished:
            with unreachable_store(writer.path.parent):  # a store gone mid-run: stop, resumable
                await writer.aappend(conversation, turns)
            spend.add(conversation)
            bar.update(conversation.status)

    async def worker(number: int, stream: AsyncClient) -> None:
        for slot in slots:  # shared iterator: each slot is taken by exactly one worker
            if spend.reached:
                break
            conversation, turns, failure = await runner.run(slot, stream)
            await record(breaker.settle(number, (conversation, turns), failure))
        await record(breaker.retire(number))

    try:
        async with asyncio.timeout(opts.budget.max_seconds):
            try:
                async with asyncio.TaskGroup() as group:
                    for number, stream in enumerate(streams):
                        group.create_task(worker(number, stream))
            except* ServiceUnreachable as group_error:
                stopped = group_error.exceptions[0]
                raise stopped from stopped.__cause__
            except* FATAL_ERRORS as group_error:
                first = group_error.exceptions[0]
                raise RunAborted(
                    f"run stopped: {first} (every conversation would fail the same way; finished "
                    "ones are kept, resume with the same run_id once fixed)"
                ) from first
            except* StoreError as group_error:  # a full disk: raised as itself, not in a group
                raise group_error.exceptions[0] from None
    except TimeoutError:
        logger.warning(
            "wall-time budget of %ss reached; open conversations were cancelled",
            opts.budget.max_seconds,
        )
        return "partial"
    if spend.reached:
        logger.warning(
            "run %s: cost budget of %s reached (%s spent); open conversations finished, the "
            "rest were not started: resume with the same run_id",
            writer.run_id,
            spend.money(opts.budget.max_cost or 0.0),
            spend.money(spend.spent),
        )
        return "partial"
    return "complete"


class _Spend:
    """What this invocation's finished conversations cost, against ``Budget.max_cost``."""

    def __init__(self, opts: RunOptions, llm: str | None) -> None:
        self.pricing = opts.pricing
        self.limit = opts.budget.max_cost
        self.llm = llm
        self.spent = 0.0

    def add(self, record: ConversationRecord) -> None:
        if self.pricing is not None:
            self.spent += self.pricing.conversation_cost(
                self.llm, record.duration_s, record.n_turns
            )

    @property
    def reached(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def money(self, amount: float) -> str:
        return self.pricing.money(amount) if self.pricing is not None else f"{amount:.2f}"


def run_llm(resolved: ResolvedTarget) -> str | None:
    """``provider/model`` of the config a run exercises (a variant's, on its clone)."""
    return llm_of(resolved.clone_config or resolved.snapshot.config)
