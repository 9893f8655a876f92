"""A store of nights for the series tests: runs written through ``RunWriter`` with the
manifests the runner writes (target, grid with its shard, counts), graded by this module's own
small generator (4 rules of 25 points, a pass probability per cell, independent repeats)."""

from __future__ import annotations

import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from evalkit.store import (
    GRADES_SCHEMA,
    RunWriter,
    StoreLike,
    grades_frame,
    grades_path,
    identity_hash,
    record_grades_summary,
    write_grades,
)

from ..test_store import record, turns_for

RUBRIC = "card-v1"
CELLS = 18
RULES = ("greets", "script", "confirms", "closes")
DAY0 = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


def _cells(shard: tuple[int, int] | None) -> list[int]:
    cells = list(range(CELLS))
    return cells if shard is None else [c for c in cells if c % shard[1] == shard[0]]


def write_night(
    store: StoreLike,
    run_id: str,
    *,
    night: int,
    assistant: str = "asst_1",
    target: str = "draft",
    drop: float = 0.0,
    shard: tuple[int, int] | None = None,
    finished: float = 1.0,
    repeats: int = 3,
    sequential_repeats: int | None = None,
    rubric: str = RUBRIC,
    grid: str = "demo-grid",
    seed: int = 0,
    config: dict[str, Any] | None = None,
) -> None:
    """One graded run; ``finished`` < 1 leaves part of the grid unrun (partial);
    ``sequential_repeats`` records a sequential plan that stopped after that many repeats;
    ``config`` is recorded as the run's config snapshot (what ``what_changed`` diffs)."""
    rng = np.random.default_rng([seed, night, zlib.crc32(run_id.encode())])
    grid_def: dict[str, Any] = {"personas": [grid], "repeats": repeats, "version": 1}
    if shard is not None:
        grid_def["shard"] = {"index": shard[0], "count": shard[1]}
    cells = _cells(shard)
    ran = sequential_repeats or repeats
    planned = [(c, r) for c in cells for r in range(1, repeats + 1)]
    todo = [(c, r) for c, r in planned if r <= ran][: round(len(planned) * finished)]
    manifest = {
        "identity": identity_hash({"grid": grid_def, "run": run_id}),
        "assistant_id": assistant,
        "target": target,
        "assistant_version": 3,
        "grid": grid_def,
        "n_conversations": len(planned),
        "created_at": (DAY0 + timedelta(days=night, minutes=len(run_id))).isoformat(),
    }
    if config is not None:
        manifest["config_snapshot"] = {"config": config}
    if sequential_repeats is not None:
        manifest["sequential"] = {"plan": {}, "looks": [], "spent": len(todo)}
    base = 0.8 - 0.1 * (np.arange(CELLS) % 3)
    rows = []
    with RunWriter.create(store, run_id, manifest, fsync=False) as writer:
        for i, (cell, repeat) in enumerate(todo):
            cid = f"{run_id}-c{cell:02d}-r{repeat}"
            writer.append(
                record(i, run_id, conversation_id=cid, cell_id=f"cell-{cell:02d}", repeat=repeat),
                turns_for(i),
            )
            for rule in RULES:
                passed = rng.random() < max(0.0, base[cell] - drop / 100)
                rows.append(_grade(run_id, cid, cell, repeat, rule, passed, rubric))
        run = writer.finalize({"outcome": "complete"})
    frame = pd.DataFrame(rows)
    full = grades_frame(
        {c: frame[c] for c in frame.columns if c in GRADES_SCHEMA.names}, len(frame)
    )
    write_grades(full, grades_path(run.path, rubric), {})
    record_grades_summary(run.path, rubric, len(todo), float(frame["points_awarded"].mean()))


def _grade(
    run_id: str, cid: str, cell: int, repeat: int, rule: str, passed: bool, rubric: str
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "conversation_id": cid,
        "cell_id": f"cell-{cell:02d}",
        "persona_label": f"persona-{cell % 6}",
        "repeat": repeat,
        "rubric_version_id": rubric,
        "rule_id": rule,
        "title": rule,
        "points": 25.0,
        "verdict": "pass" if passed else "fail",
        "points_awarded": 25.0 if passed else 0.0,
        "grader": "check",
    }
