"""Nightly history: a store's runs as a series of scores, each with its interval and two
verdicts, against the run before it and against the last-known-good run.

A run's score and interval are :func:`compare_grades`'s grid mean for that run (cells'
repeats reduced first, variance from the repeats within cells; a t interval, see
:mod:`evalkit.stats`). A verdict is :func:`compare_grades`'s paired comparison of two runs of
the same grid, so it keeps the comparison's calibration (an A/A pair comes out
``regressed`` at most 1 - confidence of the time). The last-known-good run starts as the
first run of the series; a later run takes its place when it finished complete and did not
regress against it. ``by="rule"`` gives the same per run x rule (a rule's score is its
points-weighted pass rate) against the same previous and last-known-good runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import pandas as pd

from ..store import StoreLike, StoreLocation, catalog, load_run, open_store
from ._compare import compare_grades
from ._options import CompareOptions, check_levels
from ._verdict import Verdict

__all__ = ["HISTORY_COLUMNS", "HistoryOptions", "history", "latest_regression"]

logger = logging.getLogger("evalkit.compare")

#: The columns of :func:`history`'s frame (``rule_id`` only with ``by="rule"``).
HISTORY_COLUMNS: Final = (
    "run_id",
    "started_at",
    "target",
    "assistant_id",
    "assistant_version",
    "rubric_version_id",
    "rule_id",
    "outcome",
    "conversations",
    "score",
    "score_low",
    "score_high",
    "previous_run",
    "difference_vs_previous",
    "verdict_vs_previous",
    "last_good_run",
    "difference_vs_last_good",
    "verdict_vs_last_good",
    "is_last_good",
)


@dataclass(frozen=True)
class HistoryOptions:
    """Knobs of :func:`history`: the comparison's ``min_effect`` (points) and ``confidence``,
    a ``target`` label to keep (``"prod"``, ``"draft"``, a variant), and fsspec
    ``storage_options`` for a store at a URL."""

    min_effect: float = 5.0
    confidence: float = 0.95
    target: str | None = None
    storage_options: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        check_levels(self.confidence, self.min_effect, "HistoryOptions")


def _since(since: Any) -> pd.Timestamp:
    try:
        stamp = pd.Timestamp(since)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"since: {since!r} is not a date or timestamp (e.g. 2026-11-01): {exc}"
        ) from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


@dataclass(frozen=True)
class _Point:
    run_id: str
    meta: dict[str, Any]
    grades: pd.DataFrame


def _score(grades: pd.DataFrame, confidence: float) -> tuple[float, float, float]:
    row = compare_grades(
        grades, grades, options=CompareOptions(confidence=confidence)
    ).summary.iloc[0]
    return (
        float(row["score_candidate"]),
        float(row["score_candidate_low"]),
        float(row["score_candidate_high"]),
    )


def _versus(base: pd.DataFrame, cand: pd.DataFrame, opts: HistoryOptions) -> tuple[float, str]:
    """Difference (candidate - base) and verdict; runs with no cell in common say so."""
    if base.empty or cand.empty or not set(base["cell_id"]) & set(cand["cell_id"]):
        return float("nan"), Verdict.INSUFFICIENT_EVIDENCE.value
    result = compare_grades(
        base, cand, options=CompareOptions(confidence=opts.confidence, min_effect=opts.min_effect)
    )
    return float(result.summary.iloc[0]["difference"]), result.verdict.value


def _points(runs: pd.DataFrame, rubric: str, root: StoreLocation) -> list[_Point]:
    points = []
    for meta in runs.to_dict("records"):
        # the run under the store as opened (a URL's storage_options kept)
        run = load_run(root / str(meta["path"]).rstrip("/").rsplit("/", 1)[-1])
        grades = run.grades(rubric)
        if grades.empty:
            continue
        points.append(_Point(str(meta["run_id"]), {str(k): v for k, v in meta.items()}, grades))
    return points


def _pick_rubric(runs: pd.DataFrame, rubric: str | None) -> str | None:
    if rubric is not None:
        return rubric
    graded = runs["rubrics"].dropna()
    if graded.empty:
        return None
    newest = str(graded.iloc[-1]).split(",")[0]
    logger.info("history: no rubric given; using %r, the newest run's scorecard", newest)
    return newest


def _root(store: StoreLike, opts: HistoryOptions) -> StoreLocation:
    return open_store(store, opts.storage_options)


def _select(
    store: StoreLike,
    assistant_id: str | None,
    since: Any,
    opts: HistoryOptions,
) -> pd.DataFrame:
    runs = catalog(_root(store, opts))
    if assistant_id is not None:
        runs = runs[runs["assistant_id"] == assistant_id]
    if opts.target is not None:
        runs = runs[runs["target"] == opts.target]
    if since is not None:
        runs = runs[runs["started_at"] >= _since(since)]
    return runs.reset_index(drop=True)


def _series(points: list[_Point], opts: HistoryOptions) -> list[dict[str, Any]]:
    """One row per run: score, verdicts against the previous and the last-known-good run."""
    rows: list[dict[str, Any]] = []
    good: _Point | None = None
    for i, point in enumerate(points):
        score, low, high = _score(point.grades, opts.confidence)
        prev = points[i - 1] if i else None
        row = _base_row(point, score, low, high)
        if prev is not None:
            row["previous_run"] = prev.run_id
            row["difference_vs_previous"], row["verdict_vs_previous"] = _versus(
                prev.grades, point.grades, opts
            )
        if good is not None:
            row["last_good_run"] = good.run_id
            same = prev is not None and good.run_id == prev.run_id  # one comparison, not two
            row["difference_vs_last_good"], row["verdict_vs_last_good"] = (
                (row["difference_vs_previous"], row["verdict_vs_previous"])
                if same
                else _versus(good.grades, point.grades, opts)
            )
        regressed = row.get("verdict_vs_last_good") == Verdict.REGRESSED.value
        if good is None or (point.meta.get("outcome") == "complete" and not regressed):
            good = point
            row["is_last_good"] = True
        rows.append(row)
    return rows


def _base_row(point: _Point, score: float, low: float, high: float) -> dict[str, Any]:
    meta = point.meta
    return {
        "run_id": point.run_id,
        "started_at": meta.get("started_at"),
        "target": meta.get("target"),
        "assistant_id": meta.get("assistant_id"),
        "assistant_version": meta.get("assistant_version"),
        "rubric_version_id": str(point.grades["rubric_version_id"].iloc[0]),
        "outcome": meta.get("outcome"),
        "conversations": int(point.grades["conversation_id"].nunique()),
        "score": score,
        "score_low": low,
        "score_high": high,
        "is_last_good": False,
    }


def _by_rule(
    points: list[_Point], series: list[dict[str, Any]], opts: HistoryOptions
) -> list[dict[str, Any]]:
    """Per run x rule, against the same previous and last-known-good runs as the series."""
    by_id = {p.run_id: p for p in points}
    rows = []
    for point, run_row in zip(points, series, strict=True):
        for rule_id, grades in point.grades.groupby("rule_id", sort=True):
            score, low, high = _score(grades, opts.confidence)
            row = {**_base_row(point, score, low, high), "rule_id": str(rule_id)}
            row["conversations"] = int(grades["conversation_id"].nunique())
            row["is_last_good"] = run_row["is_last_good"]
            for kind in ("previous", "last_good"):
                other = run_row.get(f"{kind}_run")
                if other is None:
                    continue
                theirs = by_id[other].grades
                theirs = theirs[theirs["rule_id"] == rule_id]
                row[f"{kind}_run"] = other
                row[f"difference_vs_{kind}"], row[f"verdict_vs_{kind}"] = _versus(
                    theirs, grades, opts
                )
            rows.append(row)
    return rows


def history(
    store: StoreLike = "runs",
    *,
    assistant_id: str | None = None,
    rubric: str | None = None,
    since: Any = None,
    by: Literal["rule"] | None = None,
    options: HistoryOptions | None = None,
) -> pd.DataFrame:
    """A store's graded runs as a tidy series, oldest first: one row per run (per run x rule
    with ``by="rule"``). See the module docstring for the method.

    ``store``: a folder or an fsspec URL. ``assistant_id``, ``since`` (a date or timestamp,
    UTC) and ``options.target`` select runs; ``rubric`` is the scorecard's rubric version id
    (None: the newest graded run's). Runs without grades for it are left out. Columns:
    :data:`HISTORY_COLUMNS` (verdicts are :class:`Verdict` values; the first run has none).
    """
    opts = options or HistoryOptions()
    if by not in (None, "rule"):
        raise ValueError(f"by must be None or 'rule', not {by!r}")
    runs = _select(store, assistant_id, since, opts)
    chosen = _pick_rubric(runs, rubric)
    points = _points(runs, chosen, _root(store, opts)) if chosen is not None else []
    series = _series(points, opts)
    rows = _by_rule(points, series, opts) if by == "rule" else series
    columns = [c for c in HISTORY_COLUMNS if by == "rule" or c != "rule_id"]
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("score", "score_low", "score_high"):
        frame[column] = frame[column].astype("float64")
    for column in ("difference_vs_previous", "difference_vs_last_good"):
        frame[column] = frame[column].astype("float64")
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
    frame["is_last_good"] = frame["is_last_good"].astype(bool)
    return frame


def latest_regression(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The newest run's row when it regressed against the last-known-good run, else None
    (what ``evalkit history --fail-on-regression`` fails on)."""
    if frame.empty:
        return None
    newest = frame[frame["run_id"] == frame["run_id"].iloc[-1]]
    if "rule_id" in newest.columns:
        hit = newest[newest["verdict_vs_last_good"] == Verdict.REGRESSED.value]
        return None if hit.empty else dict(hit.iloc[0])
    row = dict(newest.iloc[-1])
    return row if row.get("verdict_vs_last_good") == Verdict.REGRESSED.value else None
