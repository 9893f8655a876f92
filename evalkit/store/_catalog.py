"""The catalog of a store: one row per run, from the manifests alone (no table is read).

A run's manifest carries its counts (written at finalize) and, per scorecard graded, a small
summary written next to the grades (:func:`record_grades_summary`). At a URL the catalog reads
the store's index of manifest copies (:mod:`evalkit.store._catalog_index`): two listings and
one GET, plus one GET per run changed since the last catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .._util import content_hash, now_iso
from ._listing import manifest_cost, run_outcome, stored_manifests, typed_columns
from ._location import StoreLocation
from ._manifest import MANIFEST_NAME, read_manifest, write_manifest
from ._records import STATUSES
from ._urls import StoreLike, open_store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CATALOG_COLUMNS", "catalog", "grid_identity", "record_grades_summary"]

#: The catalog's fixed columns and dtypes; a ``mean_score.<rubric version>`` column follows per
#: scorecard graded anywhere in the store.
CATALOG_COLUMNS: Final[dict[str, Any]] = {
    "run_id": "str",
    "started_at": "datetime64[us, UTC]",
    "finished_at": "datetime64[us, UTC]",
    "target": "str",
    "assistant_id": "str",
    "assistant_name": "str",
    "assistant_version": "Int64",
    "variant": "str",
    "grid_identity": "str",
    "shard": "str",
    "identity": "str",
    "outcome": "str",
    "grid_size": "Int64",
    "conversations": "Int64",
    **dict.fromkeys(STATUSES, "Int64"),
    "rubrics": "str",
    "cost": "float64",
    "cost_currency": "str",
    "path": "str",
}
SCORE_PREFIX: Final = "mean_score."
_PER_SHARD: Final = frozenset({"shard", "selection", "cells_digest", "n_cells", "n_conversations"})


def grid_identity(manifest: Mapping[str, Any]) -> str | None:
    """A hash of the run's grid without its shard (nor the digest of the shard's cells):
    parallel shards of one grid share it."""
    grid = manifest.get("grid")
    if not isinstance(grid, Mapping):
        return None
    return content_hash({k: v for k, v in grid.items() if k not in _PER_SHARD})[:16]


def _shard(manifest: Mapping[str, Any]) -> str | None:
    grid = manifest.get("grid")
    shard = grid.get("shard") if isinstance(grid, Mapping) else None
    if isinstance(shard, Mapping) and {"index", "count"} <= set(shard):
        return f"{shard['index']}/{shard['count']}"
    if isinstance(shard, list | tuple) and len(shard) == 2:
        return f"{shard[0]}/{shard[1]}"
    return None


def _variant(manifest: Mapping[str, Any]) -> str | None:
    variant = manifest.get("variant")
    if isinstance(variant, Mapping):
        return str(variant.get("name")) if variant.get("name") is not None else None
    return None


def _assistant_name(manifest: Mapping[str, Any]) -> str | None:
    """The assistant's name as the service gave it when the run started (its config snapshot)."""
    snapshot = manifest.get("config_snapshot")
    name = snapshot.get("name") if isinstance(snapshot, Mapping) else None
    return str(name) if name else None


def _cost_currency(manifest: Mapping[str, Any]) -> str | None:
    cost = manifest.get("cost")
    currency = cost.get("currency") if isinstance(cost, Mapping) else None
    return str(currency) if currency and manifest_cost(manifest) is not None else None


def _row(folder: StoreLocation, manifest: Mapping[str, Any]) -> dict[str, Any]:
    counts = manifest.get("counts") or {}
    finalized = manifest.get("finalized_at") is not None
    grades = manifest.get("grades") if isinstance(manifest.get("grades"), Mapping) else {}
    assert isinstance(grades, Mapping)
    version = manifest.get("assistant_version")
    row: dict[str, Any] = {
        "run_id": str(manifest.get("run_id") or folder.name),
        "started_at": manifest.get("created_at"),
        "finished_at": manifest.get("finalized_at"),
        "target": manifest.get("target"),
        "assistant_id": manifest.get("assistant_id"),
        "assistant_name": _assistant_name(manifest),
        "assistant_version": version if isinstance(version, int) else None,
        "variant": _variant(manifest),
        "grid_identity": grid_identity(manifest),
        "shard": _shard(manifest),
        "identity": manifest.get("identity"),
        "outcome": run_outcome(dict(manifest), counts),
        "grid_size": manifest.get("n_conversations"),
        "conversations": counts.get("total") if finalized else None,
        **{status: counts.get(status) if finalized else None for status in STATUSES},
        "rubrics": ",".join(sorted(grades)) or None,
        "cost": manifest_cost(manifest),
        "cost_currency": _cost_currency(manifest),
        "path": str(folder),
    }
    for rubric, summary in grades.items():
        score = summary.get("mean_score") if isinstance(summary, Mapping) else None
        row[SCORE_PREFIX + str(rubric)] = score if isinstance(score, int | float) else None
    return row


def catalog(
    store: StoreLike = "runs", *, storage_options: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """One row per run in ``store`` (a folder or an fsspec URL), oldest first, from manifests.

    Columns: run_id, started_at, finished_at (finalize time; NaT for a run never finalized),
    target, assistant_id, assistant_name (the service's name for it when the run started),
    assistant_version, variant (its name), grid_identity (the grid without its shard: shards
    of one grid share it), shard (``"i/n"``), identity, outcome (``complete``, ``partial``,
    ``interrupted``), grid_size, conversations and the counts by status (as of the last
    finalize; null for a run never finalized: ``list_runs`` counts its journal), rubrics (the
    scorecards graded, comma-separated), cost (what the run's conversations cost when it ran
    with a price table, else NaN) and cost_currency, path, then
    ``mean_score.<rubric>`` per scorecard.
    """
    import pandas as pd

    root = open_store(store, storage_options)
    indexed = root.indexed_manifests()
    rows = [
        _row(folder, m)
        for folder, m in (indexed if indexed is not None else stored_manifests(root))
    ]
    data = typed_columns(rows, CATALOG_COLUMNS)
    scores = sorted({key for row in rows for key in row if key.startswith(SCORE_PREFIX)})
    for column in scores:
        data[column] = pd.Series([row.get(column) for row in rows], dtype="float64")
    frame = pd.DataFrame(data)
    return frame.sort_values(["started_at", "run_id"], kind="stable").reset_index(drop=True)


def record_grades_summary(
    run_path: StoreLike, rubric_version_id: str, conversations: int, mean_score: float | None
) -> None:
    """Note in the run's manifest that it was graded with ``rubric_version_id`` (for the
    catalog): how many conversations were scored and their mean score."""
    path = open_store(run_path) / MANIFEST_NAME
    manifest = read_manifest(path)
    grades = manifest.get("grades") if isinstance(manifest.get("grades"), dict) else {}
    assert isinstance(grades, dict)
    grades[rubric_version_id] = {
        "conversations": int(conversations),
        "mean_score": None if mean_score is None or mean_score != mean_score else float(mean_score),
        "graded_at": now_iso("auto"),
    }
    manifest["grades"] = grades
    write_manifest(path, manifest)
