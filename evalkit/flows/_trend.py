"""What the nightly trend notebook calls: a store's history by run and by rule (every series),
a sentence per series on its newest run, the side outputs a CI job keeps (``trend.json``,
``history.parquet``) and the regression gate (the nightly rule's confirmed ``regressed``)."""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Final

import pandas as pd

from .._results import Result
from .._util import atomic_write_bytes, json_default
from ..store import StoreLike
from ._history import HistoryOptions, history, latest_regression, series_labels
from ._notebook import Regression

__all__ = ["TREND_SUMMARY_COLUMNS", "NightlyTrend", "nightly_trend"]

logger = logging.getLogger("evalkit.flows")

_WORDS = {
    "improved": "improved",
    "regressed": "regressed",
    "no_difference": "showed no difference",
    "insufficient_evidence": "could not be told apart",
}


#: The columns of :attr:`NightlyTrend.summary`: one row per series, its newest point.
TREND_SUMMARY_COLUMNS: Final = (
    "series",
    "label",
    "points",
    "run_id",
    "score",
    "score_low",
    "score_high",
    "last_good_run",
    "difference_vs_last_good",
    "verdict_vs_last_good",
    "alarm",
    "alarm_z",
    "alarm_variance",
)


@dataclass(frozen=True, repr=False)
class NightlyTrend(Result):
    """A store's graded runs as a trend: ``by_run`` (:func:`evalkit.history`'s frame, every
    series) and ``by_rule`` (the same per run x rule), with the options they were made with.

    ``headline()`` is one sentence on the newest point of each series, ``summary`` a
    DataFrame (one row per series: its newest point, verdict and alarm), ``regression`` the
    row the gate fails on (``alarm == "regressed"``), ``series_labels`` the words for each
    series id."""

    by_run: pd.DataFrame
    by_rule: pd.DataFrame
    options: HistoryOptions
    series_labels: Mapping[str, str] = field(default_factory=dict)
    template: ClassVar[str] = "trend.html"

    @property
    def regression(self) -> dict[str, Any] | None:
        """The newest point of a series when the nightly rule confirmed a regression."""
        return latest_regression(self.by_run)

    @property
    def series(self) -> list[str]:
        """The series ids, in the order of :attr:`by_run`."""
        return [str(s) for s in dict.fromkeys(self.by_run["series"])] if len(self.by_run) else []

    def series_frame(self, series: str) -> pd.DataFrame:
        """:attr:`by_run`'s rows of one series."""
        picked: pd.DataFrame = self.by_run[self.by_run["series"] == series]
        return picked.reset_index(drop=True)

    def newest_rules(self, series: str | None = None) -> pd.DataFrame:
        """The newest point's rows of :attr:`by_rule` (of ``series``; None: the last series)."""
        if self.by_rule.empty:
            return self.by_rule
        rules = self.by_rule
        chosen = series if series is not None else str(rules["series"].iloc[-1])
        rules = rules[rules["series"] == chosen]
        newest = rules["run_id"].iloc[-1] if len(rules) else None
        picked: pd.DataFrame = rules[rules["run_id"] == newest]
        return picked.reset_index(drop=True)

    def _newest(self) -> list[dict[str, Any]]:
        return [dict(self.series_frame(s).iloc[-1]) for s in self.series]

    def headline(self) -> str:
        if self.by_run.empty:
            return "No graded run matches: nothing to plot."
        parts = [_sentence(row, self.series_labels) for row in self._newest()]
        return " ".join(parts)

    @property
    def summary(self) -> pd.DataFrame:
        rows = []
        for row in self._newest():
            series = str(row["series"])
            rows.append(
                {
                    "series": series,
                    "label": self.series_labels.get(series, series),
                    "points": len(self.series_frame(series)),
                    **{c: row.get(c) for c in TREND_SUMMARY_COLUMNS if c in row},
                }
            )
        return pd.DataFrame(rows, columns=list(TREND_SUMMARY_COLUMNS))

    def markdown(self) -> str:
        """One paragraph (Markdown) per series on its newest run: score, verdicts, alarm."""
        if self.by_run.empty:
            return "No graded run matches: nothing to plot."
        return "\n\n".join(
            _paragraph(
                self.series_frame(s),
                self.options,
                self.series_labels.get(s) if len(self.series) > 1 else None,
            )
            + _rules_tail(self.newest_rules(s))
            for s in self.series
        )

    def to_dict(self) -> dict[str, Any]:
        regression = self.regression
        return {
            "headline": self.headline(),
            "series": json_records(self.summary),
            "runs": json_records(self.by_run),
            "regressed": regression is not None,
            "regression": None if regression is None else _json_row(regression),
            "newest_run": None if self.by_run.empty else str(self.by_run["run_id"].iloc[-1]),
        }

    def html_context(self) -> dict[str, Any]:
        return {"table": self.summary}

    def write(self, output_dir: str | os.PathLike[str]) -> Path:
        """``trend.json`` (the runs, newest verdicts) and ``history.parquet`` and
        ``history_by_rule.parquet`` in ``output_dir``; returns the JSON's path."""
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, default=json_default)
        path = out / "trend.json"
        atomic_write_bytes(path, (text + "\n").encode("utf-8"), durable=False)
        self.by_run.to_parquet(out / "history.parquet", index=False)
        self.by_rule.to_parquet(out / "history_by_rule.parquet", index=False)
        logger.info("wrote %s and the history tables to %s", path.name, out)
        return path

    def fail_on_regression(self) -> None:
        """Raise :class:`Regression` when the newest run regressed against the last-known-good
        run (papermill then fails; ``evalkit history --fail-on-regression`` is the same gate)."""
        row = self.regression
        if row is not None:
            raise Regression(
                f"run {row['run_id']} regressed against the last-known-good run "
                f"{row['last_good_run']} ({row['difference_vs_last_good']:+.1f} points; "
                "confirmed by the nightly rule)"
            )


def nightly_trend(store: StoreLike, *, options: HistoryOptions | None = None) -> NightlyTrend:
    """:func:`evalkit.history` of ``store`` (a folder or URL) by run and by rule (``options``
    selects the runs as for history; its ``by`` is set for each)."""
    opts = options or HistoryOptions()
    by_run = history(store, options=replace(opts, by=None))
    by_rule = history(store, options=replace(opts, by="rule"))
    return NightlyTrend(by_run, by_rule, opts, series_labels(by_run))


def _json_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return json_records(pd.DataFrame([dict(row)]))[0]


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame``'s rows as JSON-ready dicts (timestamps ISO, NaN as None)."""
    return list(json.loads(frame.to_json(orient="records", date_format="iso")))


def _delta(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f" ({value:+.1f} points)"


def _sentence(row: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """One sentence on a series' newest point."""
    label = labels.get(str(row["series"]), str(row["series"]))
    text = f"{label}: {row['run_id']} scored {row['score']:.1f}"
    alarm = row.get("alarm")
    if isinstance(alarm, str):
        return (
            text
            + f", {alarm} against the last-known-good run {row['last_good_run']}"
            + (f"{_delta(row.get('difference_vs_last_good'))}.")
        )
    verdict = row.get("verdict_vs_last_good")
    if isinstance(verdict, str):
        words = _WORDS.get(verdict, verdict)
        return text + f"; against the last-known-good run {row['last_good_run']} it {words}."
    note = row.get("note")
    return text + (f" ({note})." if isinstance(note, str) and note else ".")


def _paragraph(frame: pd.DataFrame, options: HistoryOptions, label: str | None) -> str:
    row = frame.iloc[-1]
    n = len(frame)
    score = f"{row['score']:.1f} ({options.confidence:.0%} interval "
    score += f"{row['score_low']:.1f} to {row['score_high']:.1f})"
    where = f" of {label}" if label else ""
    text = f"**{row['run_id']}**, the newest of {n} run(s){where}, scored {score}"
    if not isinstance(row.get("verdict_vs_previous"), str) and not isinstance(
        row.get("verdict_vs_last_good"), str
    ):
        note = row.get("note")
        why = note if isinstance(note, str) and note else "nothing to compare it with"
        return text + f"; {why}."
    parts = [text]
    for kind, other in (("previous", "the run before"), ("last_good", "the last-known-good")):
        verdict = row.get(f"verdict_vs_{kind}")
        if not isinstance(verdict, str):
            continue
        diff = _delta(row.get(f"difference_vs_{kind}"))
        words = _WORDS.get(verdict, verdict)
        parts.append(f"against {other} (`{row[f'{kind}_run']}`) it {words}{diff}")
    alarm = row.get("alarm")
    if isinstance(alarm, str):
        parts.append(
            f"the nightly rule flags it **regressed** ({row.get('alarm_why')})"
            if alarm == "regressed"
            else "the nightly rule flags it **suspect** (one bad night; confirmed if the next night agrees)"
        )
    variance = row.get("alarm_variance")
    if isinstance(variance, str) and variance:
        parts.append(f"the alarm's variance: {variance}")
    return "; ".join(parts)


def _rules_tail(rules: pd.DataFrame) -> str:
    if rules.empty:
        return "."
    worse = rules[rules["verdict_vs_last_good"] == "regressed"]["rule_id"].tolist()
    return f". Rules that regressed: {', '.join(worse)}." if worse else "."
