"""Nightly history: a store's runs as series of scores, each with its interval, two verdicts
(against the run before it and against the last-known-good run) and a nightly alarm.

Runs are grouped into series that compare like with like (:mod:`evalkit.flows._series`): one
assistant, target, scorecard, grid identity and variant; shards of one grid run are one
point; a run that did not finish complete is drawn, never compared and never last-known-good.

A point's score and interval are :func:`compare_grades`'s grid mean (cells' repeats reduced
first, variance from the repeats within cells; a t interval, see :mod:`evalkit.stats`). A
verdict is :func:`compare_grades`'s paired comparison of two points of one series on the
repeats both have. The *alarm* is the nightly rule, :func:`evalkit.compare.nightly_alarms`
over the series' complete points (``suspect``: one bad night; ``regressed``: one night far
beyond the noise, or two low nights together), against the last-known-good night pooled with
the good nights before it, its standard error within the night plus the series'
between-night variance (a short series: within the night only, and it says so in
``alarm_variance``); a night with no alarm becomes the last-known-good. The gate
(:func:`latest_regression`, ``evalkit history --fail-on-regression``, the trend notebook and
the viewer) fails on ``alarm == "regressed"`` only, so an unchanged assistant raises at most
about one false alarm in a hundred nights, whether or not whole nights move
(``benchmarks/bench_nightly.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import pandas as pd

from ..compare import (
    CompareOptions,
    NightlyRule,
    Verdict,
    check_levels,
    grades_headline,
    nightly_alarms,
    side_score,
)
from ..store import StoreLike, catalog, open_store
from ._series import Point, Series, build_series, load_grades, note_first

__all__ = [
    "ALARM_COLUMNS",
    "HISTORY_COLUMNS",
    "HistoryOptions",
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
    "alarm_why",
    "alarm_difference",
    "alarm_z",
    "alarm_se",
    "between_night_sd",
    "variance_nights",
    "alarm_variance",
    "note",
)

#: History's alarm columns and the :func:`evalkit.compare.nightly_alarms` columns they hold:
#: why, the difference against the good nights pooled, its z and standard error, the
#: between-night SD added (NaN: none) and from how many nights, and the variance in words.
ALARM_COLUMNS: Final = {
    "alarm_why": "why",
    "alarm_difference": "difference",
    "alarm_z": "z",
    "alarm_se": "se",
    "between_night_sd": "between_sd",
    "variance_nights": "variance_nights",
    "alarm_variance": "variance",
}


@dataclass(frozen=True)
class HistoryOptions:
    """Knobs of :func:`history`: which runs (``assistant_id``; ``rubric``, one scorecard's
    rubric version, None: every scorecard, each its own series; ``since``, a date or
    timestamp, UTC; ``target``, ``"prod"``, ``"draft"``, a variant), ``by="rule"`` for one
    row per point x rule, the comparison's ``min_effect`` (points) and ``confidence``, the
    nightly alarm ``rule`` and fsspec ``storage_options`` for a store at a URL."""

    assistant_id: str | None = None
    rubric: str | None = None
    since: Any = None
    target: str | None = None
    by: Literal["rule"] | None = None
    min_effect: float = 5.0
    confidence: float = 0.95
    storage_options: Mapping[str, Any] | None = None
    rule: NightlyRule = field(default_factory=NightlyRule)

    def __post_init__(self) -> None:
        check_levels(self.confidence, self.min_effect, "HistoryOptions")
        if self.by not in (None, "rule"):
            raise ValueError(f"HistoryOptions.by must be None or 'rule', not {self.by!r}")
        if self.since is not None:
            _since(self.since)


def _since(since: Any) -> pd.Timestamp:
    try:
        stamp = pd.Timestamp(since)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"HistoryOptions.since: {since!r} is not a date or timestamp (e.g. 2026-11-01): {exc}"
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


def _select(store: StoreLike, opts: HistoryOptions) -> pd.DataFrame:
    runs = catalog(open_store(store, opts.storage_options))
    if opts.assistant_id is not None:
        runs = runs[runs["assistant_id"] == opts.assistant_id]
    if opts.target is not None:
        runs = runs[runs["target"] == opts.target]
    if opts.since is not None:
        runs = runs[runs["started_at"] >= _since(opts.since)]
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


def _alarms(one: Series, opts: HistoryOptions) -> dict[str, dict[str, Any]]:
    """The nightly rule over the series' comparable points (:func:`nightly_alarms`), by run."""
    nights = {p.run_id: p.grades for p in one.points if p.comparable}
    frame = nightly_alarms(nights, options=opts.rule).nights
    return {
        str(row["night"]): {str(k): v for k, v in row.items()} for row in frame.to_dict("records")
    }


def _walk(one: Series, opts: HistoryOptions) -> list[dict[str, Any]]:
    """One row per point of a series: score, verdicts against the previous and the
    last-known-good point, and the nightly alarm with the variance it used."""
    rows: list[dict[str, Any]] = []
    alarms = _alarms(one, opts)
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
        judged = alarms[point.run_id]
        good = judged["last_good"]
        if good is not None:
            row["last_good_run"] = good
            same = previous is not None and good == previous.run_id  # one comparison, not two
            row["difference_vs_last_good"], row["verdict_vs_last_good"] = (
                (row["difference_vs_previous"], row["verdict_vs_previous"])
                if same
                else _versus(by_id[good].grades, point.grades, opts)
            )
        row["alarm"] = judged["alarm"]
        row |= {column: judged[source] for column, source in ALARM_COLUMNS.items()}
        row["is_last_good"] = bool(judged["good"])
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


def history(store: StoreLike = "runs", *, options: HistoryOptions | None = None) -> pd.DataFrame:
    """A store's graded runs as tidy series, one row per point (per point x rule with
    ``options.by="rule"``), series after series, each oldest first. See the module docstring.

    ``store``: a folder or an fsspec URL. ``options`` (:class:`HistoryOptions`) selects runs
    (assistant, scorecard, since, target) and holds the comparison's levels and the nightly
    rule. Columns: :data:`HISTORY_COLUMNS`: ``series`` (a short stable id), verdicts
    (:class:`Verdict` values; a series' first point has none), ``alarm`` (None,
    ``"suspect"`` or ``"regressed"``) with the statistic and the variance it used
    (:data:`ALARM_COLUMNS`), and ``note`` (why a point is not compared, which shards were
    merged).
    """
    opts = options or HistoryOptions()
    runs = _select(store, opts)
    series = build_series(runs, opts.rubric)
    load_grades(series, open_store(store, opts.storage_options))
    for one in series:
        one.points = [p for p in one.points if not p.grades.empty]
    series = [s for s in series if s.points]
    note_first(series)
    rows: list[dict[str, Any]] = []
    for one in series:
        walked = _walk(one, opts)
        rows += _by_rule(one, walked, opts) if opts.by == "rule" else walked
    columns = [c for c in HISTORY_COLUMNS if opts.by == "rule" or c != "rule_id"]
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("score", "score_low", "score_high", "difference_vs_previous"):
        frame[column] = frame[column].astype("float64")
    for column in ("difference_vs_last_good", "alarm_difference", "alarm_z", "alarm_se"):
        frame[column] = frame[column].astype("float64")
    frame["between_night_sd"] = frame["between_night_sd"].astype("float64")
    frame["variance_nights"] = frame["variance_nights"].fillna(0).astype("int64")
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
    frame["is_last_good"] = frame["is_last_good"].astype(bool)
    for column in ("alarm", "alarm_why", "alarm_variance"):
        frame[column] = frame[column].astype("object").where(frame[column].notna(), None)
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
