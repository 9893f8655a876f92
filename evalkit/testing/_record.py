"""``record``: run a grid for a test suite, so that running the suite again asks nothing again.

The run id is made from the run's identity (the grid's definition and the resolved target:
assistant, config version, variant), so an unchanged assistant and grid map to the same run
and the runner's resume keeps every recorded conversation; a new config version is a new run.

Several processes (pytest-xdist workers) recording the same run share it through the store's
one-writer rule: the first takes the run (the journal's lock, or at a URL a claimed writer
epoch) and runs it; the others are refused (``RunLockedError``, or ``RunExistsError`` when
they created it at the same moment), wait while the run's journal grows, and read the run
once it is finalized. No conversation is run twice.
"""

from __future__ import annotations

import logging
import time
from typing import Final

from .._util import run_sync
from ..api import AsyncClient, Client
from ..grid import Grid
from ..runner import RunDefinition, RunOptions, run_grid
from ..store import (
    Run,
    RunExistsError,
    RunLockedError,
    StoreLike,
    load_run,
    open_store,
    read_stored_manifest,
)
from ..targets import ResolvedTarget, SnapshotStore, Target, resolve_target

__all__ = ["STALL_S", "record", "run_id_for"]

logger = logging.getLogger("evalkit.testing")

#: How long a waiting process waits without the other writer recording a conversation.
STALL_S: Final = 600.0
_POLL_S: Final = 0.5


async def _resolve(
    assistant_id: str, target: Target, client: Client | AsyncClient | None, store: StoreLike
) -> ResolvedTarget:
    if isinstance(client, AsyncClient):
        aclient, owned = client, False
    else:
        aclient = AsyncClient.from_client(client) if client is not None else AsyncClient()
        owned = True
    try:
        return await resolve_target(aclient, assistant_id, target, SnapshotStore(store))
    finally:
        if owned:
            await aclient.aclose()


def run_id_for(grid: Grid, resolved: ResolvedTarget) -> str:
    """``<target>-<12 hex of the run's identity>``: the same for the same grid and target."""
    label = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in resolved.label)[:32]
    return f"{label}-{RunDefinition.of(grid, resolved).identity[:12]}"


def _finished(store: StoreLike, run_id: str) -> bool:
    manifest = read_stored_manifest(open_store(store) / run_id)
    return bool(manifest and manifest.get("finalized_at") and manifest.get("outcome") == "complete")


def _wait_for_writer(store: StoreLike, run_id: str) -> None:
    """Wait until the run is finalized or its writer lets go; refuse a writer that stalls."""
    path = open_store(store) / run_id
    seen = path.journal_bytes()
    quiet_since = time.monotonic()
    logger.info("run %s: another process is recording it; waiting for it", run_id)
    while True:
        time.sleep(_POLL_S)
        manifest = read_stored_manifest(path)
        if manifest and manifest.get("finalized_at"):
            return
        size = path.journal_bytes()
        if size != seen:
            seen, quiet_since = size, time.monotonic()
        elif time.monotonic() - quiet_since > STALL_S:
            raise RunLockedError(
                f"{path}: another process holds this run and has recorded nothing for "
                f"{STALL_S:.0f} s; stop it, or record again once it has finished",
                path,
            )


def record(
    grid: Grid,
    assistant_id: str,
    target: Target = "draft",
    *,
    client: Client | AsyncClient | None = None,
    store: StoreLike = "runs",
    options: RunOptions | None = None,
) -> Run:
    """Run ``grid`` on ``assistant_id``'s ``target`` under a run id made from the run's
    identity (:func:`run_id_for`), and return the stored :class:`~evalkit.store.Run`.

    A run already recorded complete is read, not run; a partial one resumes (the runner's
    resume: nothing recorded is asked again); a new config version or a changed grid is a new
    run. Processes recording the same run at once share it (module docstring). ``client``,
    ``store`` and ``options`` are :func:`evalkit.run_grid`'s.
    """
    resolved = run_sync(lambda: _resolve(assistant_id, target, client, store))
    run_id = run_id_for(grid, resolved)
    while True:
        if _finished(store, run_id):
            return load_run(run_id, store)
        try:
            return run_grid(
                grid, assistant_id, target, run_id, client=client, store=store, options=options
            )
        except (RunLockedError, RunExistsError):
            _wait_for_writer(store, run_id)
