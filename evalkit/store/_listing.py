"""Listing and stacking the runs of a store: :func:`list_runs`, :func:`load_runs`."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from ._errors import (
    StoreError,
)
from ._layout import (
    SCHEMAS,
    TableName,
    count_statuses,
)
from ._location import StoreLocation
from ._manifest import MANIFEST_NAME
from ._manifest_file import parse_listed_manifest
from ._reader import Run, load_run
from ._records import (
    STATUSES,
)
from ._tables import (
    empty_frame,
    to_frame,
)
from ._turn_timing import with_turn_latency
from ._urls import StoreLike, is_store_url, open_store

if TYPE_CHECKING:
    import pandas as pd

logger = logging.getLogger("evalkit.store")


_LIST_COLUMNS: Final[dict[str, Any]] = {
    "run_id": "str",
    "created_at": "datetime64[us, UTC]",
    "finalized_at": "datetime64[us, UTC]",
    "assistant_id": "str",
    "target": "str",
    "outcome": "str",
    "n_conversations": "Int64",
    "grid_size": "Int64",
    **dict.fromkeys(STATUSES, "Int64"),
    "finalized": "bool",
    "identity": "str",
    "evalkit_version": "str",
    "cost": "float64",
    "path": "str",
}


def stored_manifests(root: StoreLocation) -> list[tuple[StoreLocation, dict[str, Any]]]:
    """(run folder, manifest) for every run directly inside ``root``, in name order.

    At a URL the manifests are fetched concurrently. A folder with an unreadable manifest is
    skipped with a warning; one without a manifest (snapshots, caches) silently.
    """
    children = sorted(
        (c for c in _children(root) if not c.name.startswith(".")), key=lambda c: c.name
    )
    wanted = [child / MANIFEST_NAME for child in children]
    data = root.read_many(wanted)
    found: list[tuple[StoreLocation, dict[str, Any]]] = []
    for child, path in zip(children, wanted, strict=True):
        raw = data.get(path)
        if raw is None:
            continue
        manifest = parse_listed_manifest(raw, child, "list_runs")
        if manifest is not None:
            found.append((child, manifest))
    return found


def _children(root: StoreLocation) -> list[StoreLocation]:
    try:
        return list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def run_rows(store: StoreLike = "runs") -> list[dict[str, Any]]:
    """The rows of :func:`list_runs` as plain dicts (timestamps as the manifests' ISO text),
    oldest first; reads only manifests (and the journal of a run never finalized) and imports
    no pandas, so ``evalkit runs`` answers fast."""
    rows: list[dict[str, Any]] = []
    for child, manifest in stored_manifests(open_store(store)):
        counts = manifest.get("counts") or {}
        if manifest.get("finalized_at") is None:  # never finalized (killed): count the journal
            try:
                counts = count_statuses(child.read_journal(with_turns=False).conversations)
            except StoreError as exc:
                logger.warning("list_runs: cannot count %s: %s", child, exc)
        rows.append(
            {
                "run_id": str(manifest.get("run_id") or child.name),
                "created_at": manifest.get("created_at"),
                "finalized_at": manifest.get("finalized_at"),
                "assistant_id": manifest.get("assistant_id"),
                "target": manifest.get("target"),
                "outcome": run_outcome(manifest, counts),
                "n_conversations": counts.get("total"),
                "grid_size": manifest.get("n_conversations"),
                **{status: counts.get(status) for status in STATUSES},
                "finalized": manifest.get("finalized_at") is not None,
                "identity": manifest.get("identity"),
                "evalkit_version": manifest.get("evalkit_version"),
                "cost": manifest_cost(manifest),
                "path": str(child),
            }
        )
    return sorted(rows, key=lambda row: (*_instant(row["created_at"]), row["run_id"]))


def _instant(value: Any) -> tuple[bool, datetime]:
    """A sort key for an ISO timestamp: unparseable or missing last (as pandas sorts NaT)."""
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return (True, datetime.min.replace(tzinfo=UTC))
    return (False, when if when.tzinfo else when.replace(tzinfo=UTC))


def list_runs(store: StoreLike = "runs") -> pd.DataFrame:
    """One row per run in ``store``, oldest first.

    Columns: run_id, created_at, finalized_at, assistant_id, target, outcome (``complete``,
    ``partial``: stopped by a budget or a shard of the grid left to run, ``interrupted``:
    Ctrl-C, an abort or a kill), n_conversations (recorded), grid_size (conversations in the
    grid), done, error, dropped, failed (counts as of the last finalize; from the journal for a
    run never finalized), finalized, identity, evalkit_version, cost (what the run's
    conversations cost when it ran with a price table, else NaN), path. ``store`` is a folder
    or an fsspec URL (``s3://bucket/prefix``). A folder with an unreadable manifest is skipped
    with a warning.
    """
    import pandas as pd

    frame = pd.DataFrame(typed_columns(run_rows(store), _LIST_COLUMNS))
    return frame.sort_values(["created_at", "run_id"], kind="stable").reset_index(drop=True)


def manifest_cost(manifest: Mapping[str, Any]) -> float | None:
    """The spend a run recorded (``cost.total``, when it ran with a price table), else None."""
    cost = manifest.get("cost")
    total = cost.get("total") if isinstance(cost, Mapping) else None
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None


def run_outcome(manifest: dict[str, Any], counts: dict[str, Any]) -> str:
    """``complete``, ``partial`` or ``interrupted``: a run never finalised was killed; one
    finalised with fewer conversations than its grid is partial even if it says complete."""
    if manifest.get("finalized_at") is None:
        return "interrupted"
    stored = manifest.get("outcome")
    if stored == "interrupted":
        return "interrupted"
    grid_size = manifest.get("n_conversations")
    recorded = counts.get("total") or 0
    if isinstance(grid_size, int) and recorded < grid_size:
        return "partial"
    return "complete" if stored in (None, "complete") else str(stored)


RunsInput: TypeAlias = StoreLike | Run | Iterable[StoreLike | Run]


def _resolve_runs(runs_or_store: RunsInput, store: StoreLike) -> list[Run]:
    if isinstance(runs_or_store, Run):
        return [runs_or_store]
    if isinstance(runs_or_store, str) or not isinstance(runs_or_store, Iterable):
        where = open_store(runs_or_store)
        if (where / MANIFEST_NAME).is_file():
            return [Run(where)]
        if is_store_url(runs_or_store) or where.is_dir():
            found = stored_manifests(where)  # oldest first
            found.sort(key=lambda item: (str(item[1].get("created_at") or ""), item[0].name))
            return [Run(folder) for folder, _ in found]
        return [load_run(runs_or_store, store)]
    return [item if isinstance(item, Run) else load_run(item, store) for item in runs_or_store]


def load_runs(
    runs_or_store: RunsInput | None = None,
    table: TableName = "conversations",
    *,
    store: StoreLike = "runs",
) -> pd.DataFrame:
    """Several runs' ``table`` stacked into one frame (``run_id`` tells them apart).

    ``runs_or_store`` is a store folder or URL (every run in it: parallel CI shards written to
    one prefix come back merged), a run folder, or an iterable of runs, run folders and run ids
    (resolved in ``store``); None means every run in ``store``. ``table`` is
    ``"conversations"``, ``"turns"`` or ``"grades"``.
    """
    import pandas as pd

    if table not in SCHEMAS:
        raise ValueError(f"table must be one of {sorted(SCHEMAS)}, not {table!r}")
    frames = []
    source = store if runs_or_store is None else runs_or_store
    for run in _resolve_runs(source, store):
        frame = run.grades() if table == "grades" else run._frame(table)
        if len(frame):
            frames.append(frame)
    if not frames:
        if table == "turns":  # the same columns as Run.turns, latency_s included
            return to_frame(with_turn_latency(SCHEMAS["turns"].empty_table()), SCHEMAS["turns"])
        return empty_frame(SCHEMAS[table])
    return pd.concat(frames, ignore_index=True)


def typed_columns(rows: list[dict[str, Any]], columns: Mapping[str, Any]) -> dict[str, Any]:
    """``rows`` (dicts) as typed columns: ISO timestamps parsed to UTC, others by dtype."""
    import pandas as pd

    data: dict[str, Any] = {}
    for column, dtype in columns.items():
        values = [row.get(column) for row in rows]
        if dtype.startswith("datetime"):
            data[column] = pd.to_datetime(
                pd.Series(values, dtype="object"), utc=True, format="ISO8601", errors="coerce"
            ).astype(dtype)
        else:
            data[column] = pd.Series(values, dtype=dtype)
    return data
