"""Peeking: a comparison of runs that extend a pair compared before (same grid, more repeats).

Comparing, adding repeats and comparing again until the verdict looks decided inflates false
alarms (A/A: 14.5% instead of 5% when re-checking after each repeat from 2 to 8). Every
:func:`evalkit.compare_runs` leaves a small record under the store (``.comparisons/``: the pair's
identity without repeats, the runs, how many conversations each side had, when); a later
comparison of the same pair with more conversations gets a warning that says so and points
to :class:`evalkit.SequentialPlan`, whose looks are adjusted for exactly this.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from .._util import content_hash, now_iso

if TYPE_CHECKING:
    from ..store import Run, StoreLocation

__all__ = ["PEEKING_DIR", "peeking_warning", "record_comparison"]

logger = logging.getLogger("evalkit.flows")

#: Folder, under the store, of one small JSON record per comparison of stored runs.
PEEKING_DIR = ".comparisons"


#: Grid definition keys that change with the repeats (the rest names the cells).
_BY_REPEATS = frozenset({"repeats", "n_conversations"})


def _side_key(run: Run) -> dict[str, Any]:
    grid = {k: v for k, v in (run.manifest.get("grid") or {}).items() if k not in _BY_REPEATS}
    return {"grid": grid, "target": run.manifest.get("target_definition")}


def pair_key(baseline: Run, candidate: Run) -> str:
    """The pair's identity: both sides' grid (without repeats) and target."""
    sides = {"baseline": _side_key(baseline), "candidate": _side_key(candidate)}
    return content_hash(sides, length=24)


def _size(run: Run) -> int:
    return int((run.conversations["status"] == "done").sum())


def _folder(run: Run) -> StoreLocation:
    """The records' folder, under the run's store."""
    return run.path.parent / PEEKING_DIR


def peeking_warning(baseline: Run, candidate: Run) -> str | None:
    """A sentence when this pair was compared before with fewer conversations, else None."""
    key = pair_key(baseline, candidate)
    sizes = (_size(baseline), _size(candidate))
    earlier: list[dict[str, Any]] = []
    for path in _folder(baseline).files(f"{key}-*.json"):
        try:
            record = json.loads(path.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            continue
        before = tuple(record.get("conversations") or (0, 0))
        if before != sizes and all(b <= s for b, s in zip(before, sizes, strict=True)):
            earlier.append(record)
    if not earlier:
        return None
    first = min(earlier, key=lambda r: tuple(r["conversations"]))
    return (
        f"These runs extend a pair compared before ({first['baseline_run']} vs "
        f"{first['candidate_run']} with {first['conversations'][0]} vs "
        f"{first['conversations'][1]} conversations, {len(earlier)} earlier look(s), first on "
        f"{first['compared_at'][:10]}): comparing again after adding repeats inflates false "
        "alarms (peeking). Fix the size before looking, or run a SequentialPlan, whose looks "
        "are adjusted for it."
    )


def record_comparison(baseline: Run, candidate: Run) -> None:
    """Leave this comparison's record under the store (best effort: a read-only store is fine)."""
    record = {
        "pair": pair_key(baseline, candidate),
        "baseline_run": baseline.run_id,
        "candidate_run": candidate.run_id,
        "conversations": [_size(baseline), _size(candidate)],
        "compared_at": now_iso(),
    }
    folder = _folder(baseline)
    target = folder / f"{record['pair']}-{uuid.uuid4().hex[:12]}.json"
    data = json.dumps(record, sort_keys=True).encode("utf-8")
    try:
        target.create_bytes(data, durable=False)
    except OSError as exc:
        logger.debug("could not record the comparison under %s: %s", folder, exc)
