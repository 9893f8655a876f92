"""A store's runs as series that compare like with like (DESIGN.md "History that compares like
with like").

A series is one assistant, target, scorecard (rubric version), grid identity and variant: its
runs are nights of the same measurement. Shards of one grid run (the manifests say shard i of
n of one grid identity) make one point, their grades stacked as :func:`evalkit.load_runs`
stacks shards. A point that did not finish complete (partial, interrupted, a shard missing) is
drawn but never compared; a sequential run that stopped early is compared on the repeats it has.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import pandas as pd

from .._util import content_hash
from ..store import StoreLike, load_run

__all__ = ["Point", "Series", "build_series", "series_id"]

#: Shards of one grid run started within this long of the first shard are one point.
SHARD_WINDOW: Final = pd.Timedelta(hours=12)


def _text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def series_id(key: tuple[str | None, ...]) -> str:
    """A short stable id of a series key (assistant, target, rubric, grid identity, variant)."""
    return content_hash(list(key))[:10]


@dataclass
class Point:
    """One night of a series: its runs (several when shards were merged), their catalog
    rows, grades (loaded later), whether it can be compared and why not."""

    runs: list[dict[str, Any]]
    comparable: bool = True
    note: str | None = None
    sequential: bool = False
    grades: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def run_id(self) -> str:
        return str(self.runs[0]["run_id"])

    @property
    def meta(self) -> dict[str, Any]:
        return self.runs[0]


@dataclass
class Series:
    """The points of one series, oldest first, and its key."""

    key: tuple[str | None, ...]
    points: list[Point]

    @property
    def id(self) -> str:
        return series_id(self.key)

    def label(self) -> str:
        """Words for a heading: assistant, target (variant), scorecard, grid."""
        assistant, target, rubric, grid, variant = self.key
        what = f"{target}" + (f" variant {variant}" if variant else "")
        return f"{assistant} {what}, scorecard {rubric}, grid {str(grid)[:8]}"


def _shard(value: Any) -> tuple[int, int] | None:
    text = _text(value)
    if not text or "/" not in text:
        return None
    index, count = text.split("/", 1)
    return int(index), int(count)


def _group_shards(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Runs in start order; shards of one grid run (distinct indices of one count, started
    within :data:`SHARD_WINDOW` of the first) grouped, every other run alone."""
    groups: list[list[dict[str, Any]]] = []
    open_groups: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        shard = _shard(row.get("shard"))
        if shard is None:
            groups.append([row])
            continue
        _, count = shard
        group = open_groups.get(count)
        fits = group is not None and all(_shard(r.get("shard")) != shard for r in group)
        if (
            group is not None
            and fits
            and row["started_at"] - group[0]["started_at"] <= SHARD_WINDOW
        ):
            group.append(row)
            continue
        group = [row]
        open_groups[count] = group
        groups.append(group)
    return groups


def _point(group: list[dict[str, Any]]) -> Point:
    point = Point(runs=sorted(group, key=lambda r: _shard(r.get("shard")) or (0, 0)))
    shard = _shard(group[0].get("shard"))
    unfinished = [r for r in group if r.get("outcome") != "complete"]
    if shard is not None:
        count = shard[1]
        have = sorted(i for i, _ in (_shard(r.get("shard")) or (0, 0) for r in group))
        missing = sorted(set(range(count)) - set(have))
        names = ", ".join(str(r["run_id"]) for r in point.runs)
        if missing:
            point.comparable = False
            point.note = (
                f"shards {', '.join(f'{i}/{count}' for i in have)} only (shard "
                f"{', '.join(map(str, missing))} of {count} missing): {names}"
            )
        elif len(group) > 1:
            point.note = f"{count} shards merged: {names}"
    if unfinished and point.comparable:
        point.comparable = False
        what = ", ".join(f"{r['run_id']} {r.get('outcome')}" for r in unfinished)
        point.note = f"not finished complete ({what}): drawn, not compared"
    return point


def build_series(runs: pd.DataFrame, rubric: str | None) -> list[Series]:
    """``runs`` (catalog rows, oldest first) as series: one per key, each run once per
    scorecard it was graded with (only ``rubric`` when given)."""
    by_key: dict[tuple[str | None, ...], list[dict[str, Any]]] = {}
    for raw in runs.to_dict("records"):
        row = {str(k): v for k, v in raw.items()}
        for graded in str(_text(row.get("rubrics")) or "").split(","):
            if not graded or (rubric is not None and graded != rubric):
                continue
            key = (
                _text(row.get("assistant_id")),
                _text(row.get("target")),
                graded,
                _text(row.get("grid_identity")),
                _text(row.get("variant")),
            )
            by_key.setdefault(key, []).append(row)
    return [
        Series(key, [_point(group) for group in _group_shards(rows)])
        for key, rows in by_key.items()
    ]


def load_grades(series: Iterable[Series], root: StoreLike) -> None:
    """Each point's grades for its series' scorecard, shards stacked; a run that recorded a
    sequential plan is marked (it stopped early by design and is compared on its repeats)."""
    for one in series:
        rubric = one.key[2]
        for point in one.points:
            frames = []
            for row in point.runs:
                run = load_run(str(row["run_id"]), store=root)
                point.sequential = point.sequential or isinstance(
                    run.manifest.get("sequential"), dict
                )
                frames.append(run.grades(rubric))
            point.grades = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            if (
                point.sequential
                and not point.comparable
                and point.note
                and "not finished" in point.note
            ):
                point.comparable = True
                point.note = "sequential run: stopped at its deciding look, compared on its repeats"


def note_first(series: list[Series]) -> None:
    """Say why the first point of a series has no verdict, and when a series follows another
    one of the same assistant, target, grid and variant graded with another scorecard."""
    for one in series:
        first = next((p for p in one.points if p.comparable), None)
        if first is None:
            continue
        others = [
            str(s.key[2])
            for s in series
            if s is not one and s.key[:2] == one.key[:2] and s.key[3:] == one.key[3:]
        ]
        words = "first of its series"
        if others:
            words += (
                f"; runs graded with another scorecard ({', '.join(sorted(others))}) "
                "are another series"
            )
        first.note = f"{first.note}; {words}" if first.note else words
