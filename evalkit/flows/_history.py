"""Nightly history: a store's runs as series of scores, each with its interval, two verdicts
(against the run before it and against the last-known-good run) and a nightly alarm.

Runs are grouped into series that compare like with like (:mod:`evalkit.flows._series`): one
assistant, target, scorecard, grid identity and variant; shards of one grid run are one
point; a run that did not finish complete is drawn, never compared and never last-known-good.

A point's score and interval are :func:`compare_grades`'s grid mean (cells' repeats reduced
first, variance from the repeats within cells; a t interval, see :mod:`evalkit.stats`). A
verdict is :func:`compare_grades`'s paired comparison of two points of one series on the
repeats both have. The *alarm* is the nightly confirmation rule of
:mod:`evalkit.compare._alarms` (``suspect``: one bad night; ``regressed``: confirmed on the
next night, or one night far beyond the noise), against the last-known-good night pooled with
the good nights before it; a night with no alarm becomes the last-known-good. The gate
(:func:`latest_regression`, ``evalkit history --fail-on-regression``, the trend notebook and
the viewer) fails on ``alarm == "regressed"`` only, so an unchanged assistant raises at most
about one false alarm in a hundred nights (``benchmarks/bench_nightly.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import pandas as pd

from ..compare import (
    AlarmWatch,
    CompareOptions,
    NightlyRule,
    Verdict,
    check_levels,
    grades_headline,
    side_score,
)
from ..grading import conversation_points
from ..store import StoreLike, catalog, open_store
from ._series import Point, Series, build_series, load_grades, note_first

__all__ = [
    "HISTORY_COLUMNS",
    "HistoryOptions",
    "conversation_scores",
    "history",
    "latest_regression",
    "series_labels",
]

logger = logging.getLogger("evalkit.flows")

#: The columns of :func:`history`'s frame (``rule_id`` only with ``by="rule"``).
HISTORY_COLUMNS: Final = (
    "series",
    "run_id",
    "started_at",
    "target",
    "assistant_id",
    "assistant_version",
    "variant",
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
    "alarm",
    "note",
)


@dataclass(frozen=True)
class HistoryOptions:
    """Knobs of :func:`history`: the comparison's ``min_effect`` (points) and ``confidence``,
    a ``target`` label to keep (``"prod"``, ``"draft"``, a variant), the nightly alarm
    ``rule`` and fsspec ``storage_options`` for a store at a URL."""

    min_effect: float = 5.0
    confidence: float = 0.95
    target: str | None = None
    storage_options: Mapping[str, Any] | None = None
    rule: NightlyRule = field(default_factory=NightlyRule)

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


def _score(grades: pd.DataFrame, confidence: float) -> tuple[float, float, float]:
    score = side_score(grades, confidence)
    return float(score.estimate), float(score.low), float(score.high)


def _common_repeats(base: pd.DataFrame, cand: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sides cut to the repeats both have (a sequential run stops early)."""
    if base["repeat"].isna().any() or cand["repeat"].isna().any():
        return base, cand
    most = min(int(base["repeat"].max()), int(cand["repeat"].max()))
    return base[base["repeat"] <= most], cand[cand["repeat"] <= most]


def _versus(base: pd.DataFrame, cand: pd.DataFrame, opts: HistoryOptions) -> tuple[float, str]:
    """Difference (candidate - base) and verdict; points with no cell in common say so."""
    if base.empty or cand.empty or not set(base["cell_id"]) & set(cand["cell_id"]):
        return float("nan"), Verdict.INSUFFICIENT_EVIDENCE.value
    base, cand = _common_repeats(base, cand)
    decision = grades_headline(
        base, cand, CompareOptions(confidence=opts.confidence, min_effect=opts.min_effect)
    ).decision
    return float(decision.interval.estimate), decision.verdict.value


def conversation_scores(grades: pd.DataFrame) -> pd.DataFrame:
    """One row per conversation: its ``cell_id`` and ``score`` (0-100), what the alarm reads."""
    points = conversation_points(grades)
    cells = grades.drop_duplicates("conversation_id").set_index("conversation_id")["cell_id"]
    return pd.DataFrame(
        {"cell_id": cells.reindex(points.index).astype(str).to_numpy(), "score": points["score"]}
    )


def _select(
    store: StoreLike,
    assistant_id: str | None,
    since: Any,
    opts: HistoryOptions,
) -> pd.DataFrame:
    runs = catalog(open_store(store, opts.storage_options))
    if assistant_id is not None:
        runs = runs[runs["assistant_id"] == assistant_id]
    if opts.target is not None:
        runs = runs[runs["target"] == opts.target]
    if since is not None:
        runs = runs[runs["started_at"] >= _since(since)]
    return runs.reset_index(drop=True)


def _base_row(one: Series, point: Point, opts: HistoryOptions) -> dict[str, Any]:
    meta = point.meta
    row: dict[str, Any] = {
        "series": one.id,
        "run_id": point.run_id,
        "started_at": meta.get("started_at"),
        "target": meta.get("target"),
        "assistant_id": meta.get("assistant_id"),
        "assistant_version": meta.get("assistant_version"),
        "variant": one.key[4],
        "rubric_version_id": one.key[2],
        "outcome": "complete" if point.comparable else meta.get("outcome"),
        "conversations": int(point.grades["conversation_id"].nunique()),
        "is_last_good": False,
        "note": point.note,
    }
    row["score"], row["score_low"], row["score_high"] = _score(point.grades, opts.confidence)
    return row


def _walk(one: Series, opts: HistoryOptions) -> list[dict[str, Any]]:
    """One row per point of a series: score, verdicts against the previous and the
    last-known-good point, and the nightly alarm."""
    rows: list[dict[str, Any]] = []
    watch = AlarmWatch(opts.rule)
    by_id = {p.run_id: p for p in one.points}
    previous: Point | None = None
    for point in one.points:
        row = _base_row(one, point, opts)
        rows.append(row)
        if not point.comparable:
            continue
        if previous is not None:
            row["previous_run"] = previous.run_id
            row["difference_vs_previous"], row["verdict_vs_previous"] = _versus(
                previous.grades, point.grades, opts
            )
        good = watch.last_good
        if good is not None:
            row["last_good_run"] = good
            same = previous is not None and good == previous.run_id  # one comparison, not two
            row["difference_vs_last_good"], row["verdict_vs_last_good"] = (
                (row["difference_vs_previous"], row["verdict_vs_previous"])
                if same
                else _versus(by_id[good].grades, point.grades, opts)
            )
        _, row["alarm"] = watch.observe(point.run_id, conversation_scores(point.grades))
        row["is_last_good"] = watch.last_good == point.run_id
        previous = point
    return rows


def _by_rule(one: Series, rows: list[dict[str, Any]], opts: HistoryOptions) -> list[dict[str, Any]]:
    """Per point x rule, against the same previous and last-known-good points."""
    by_id = {p.run_id: p for p in one.points}
    out = []
    for point, run_row in zip(one.points, rows, strict=True):
        for rule_id, grades in point.grades.groupby("rule_id", sort=True):
            score, low, high = _score(grades, opts.confidence)
            row = {**run_row, "rule_id": str(rule_id), "score": score}
            row |= {"score_low": low, "score_high": high}
            row["conversations"] = int(grades["conversation_id"].nunique())
            for kind in ("previous", "last_good"):
                other = run_row.get(f"{kind}_run")
                if other is None:
                    continue
                theirs = by_id[other].grades
                row[f"difference_vs_{kind}"], row[f"verdict_vs_{kind}"] = _versus(
                    theirs[theirs["rule_id"] == rule_id], grades, opts
                )
            out.append(row)
    return out


def history(
    store: StoreLike = "runs",
    *,
    assistant_id: str | None = None,
    rubric: str | None = None,
    since: Any = None,
    by: Literal["rule"] | None = None,
    options: HistoryOptions | None = None,
) -> pd.DataFrame:
    """A store's graded runs as tidy series, one row per point (per point x rule with
    ``by="rule"``), series after series, each oldest first. See the module docstring.

    ``store``: a folder or an fsspec URL. ``assistant_id``, ``since`` (a date or timestamp,
    UTC) and ``options.target`` select runs; ``rubric`` keeps one scorecard's rubric version
    (None: every scorecard, each its own series). Columns: :data:`HISTORY_COLUMNS`:
    ``series`` (a short stable id), verdicts (:class:`Verdict` values; a series' first point
    has none), ``alarm`` (None, ``"suspect"`` or ``"regressed"``) and ``note`` (why a point
    is not compared, which shards were merged).
    """
    opts = options or HistoryOptions()
    if by not in (None, "rule"):
        raise ValueError(f"by must be None or 'rule', not {by!r}")
    runs = _select(store, assistant_id, since, opts)
    series = build_series(runs, rubric)
    load_grades(series, open_store(store, opts.storage_options))
    for one in series:
        one.points = [p for p in one.points if not p.grades.empty]
    series = [s for s in series if s.points]
    note_first(series)
    rows: list[dict[str, Any]] = []
    for one in series:
        walked = _walk(one, opts)
        rows += _by_rule(one, walked, opts) if by == "rule" else walked
    columns = [c for c in HISTORY_COLUMNS if by == "rule" or c != "rule_id"]
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("score", "score_low", "score_high"):
        frame[column] = frame[column].astype("float64")
    for column in ("difference_vs_previous", "difference_vs_last_good"):
        frame[column] = frame[column].astype("float64")
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
    frame["is_last_good"] = frame["is_last_good"].astype(bool)
    frame["alarm"] = frame["alarm"].astype("object").where(frame["alarm"].notna(), None)
    return frame


def latest_regression(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The newest point of a series when the nightly rule flags it ``regressed`` (confirmed),
    else None: what ``evalkit history --fail-on-regression``, the trend notebook and the viewer
    fail on. With several series, the first series whose newest point regressed."""
    if frame.empty:
        return None
    for _, rows in frame.groupby("series", sort=False):
        newest = rows[rows["run_id"] == rows["run_id"].iloc[-1]]
        hit = newest[newest["alarm"] == "regressed"]
        if not hit.empty:  # by rule: a rule that regressed against the last good, if any
            worst = hit[hit["verdict_vs_last_good"] == Verdict.REGRESSED.value]
            return dict((worst if not worst.empty else hit).iloc[0])
    return None


def series_labels(frame: pd.DataFrame) -> dict[str, str]:
    """Words for each series id of a history frame: assistant, target (variant), scorecard;
    the id is added when two series would read the same (their grids differ)."""
    words: dict[str, str] = {}
    for series, rows in frame.groupby("series", sort=False):
        row = rows.iloc[0]
        variant, target = row.get("variant"), row.get("target")
        what = [str(row["assistant_id"])]
        what += [str(target)] if isinstance(target, str) else []
        what += [f"variant {variant}"] if isinstance(variant, str) else []
        words[str(series)] = f"{' '.join(what)}, scorecard {row['rubric_version_id']}"
    seen: dict[str, int] = {}
    for text in words.values():
        seen[text] = seen.get(text, 0) + 1
    return {k: (f"{v} (series {k})" if seen[v] > 1 else v) for k, v in words.items()}
