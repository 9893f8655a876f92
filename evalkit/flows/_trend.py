"""What the nightly trend notebook calls: a store's history by run and by rule, a sentence on
the newest run, the side outputs a CI job keeps (``trend.json``, ``history.parquet``) and the
regression gate."""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._util import atomic_write_bytes, json_default
from ..compare import HistoryOptions, history, latest_regression
from ..store import StoreLike
from ._notebook import Regression

__all__ = ["NightlyTrend", "nightly_trend"]

logger = logging.getLogger("evalkit.flows")

_WORDS = {
    "improved": "improved",
    "regressed": "regressed",
    "no_difference": "showed no difference",
    "insufficient_evidence": "could not be told apart",
}


@dataclass(frozen=True)
class NightlyTrend:
    """A store's graded runs as a trend: ``by_run`` (:func:`evalkit.history`'s frame) and
    ``by_rule`` (the same per run x rule), with the options they were made with."""

    by_run: pd.DataFrame
    by_rule: pd.DataFrame
    options: HistoryOptions

    @property
    def regression(self) -> dict[str, Any] | None:
        """The newest run's row when it regressed against the last-known-good run."""
        return latest_regression(self.by_run)

    def newest_rules(self) -> pd.DataFrame:
        """The newest run's rows of :attr:`by_rule`."""
        if self.by_rule.empty:
            return self.by_rule
        newest = self.by_rule["run_id"].iloc[-1]
        picked: pd.DataFrame = self.by_rule[self.by_rule["run_id"] == newest]
        return picked.reset_index(drop=True)

    def summary(self) -> str:
        """One paragraph (Markdown) on the newest run: its score and both verdicts."""
        if self.by_run.empty:
            return "No graded run matches: nothing to plot."
        row = self.by_run.iloc[-1]
        n = len(self.by_run)
        score = f"{row['score']:.1f} ({self.options.confidence:.0%} interval "
        score += f"{row['score_low']:.1f} to {row['score_high']:.1f})"
        text = f"**{row['run_id']}**, the newest of {n} run(s), scored {score}"
        if n == 1:
            return text + "; it is the first run, so there is nothing to compare it with."
        parts = [text]
        for kind, other in (("previous", "the run before"), ("last_good", "the last-known-good")):
            verdict = row.get(f"verdict_vs_{kind}")
            if not isinstance(verdict, str):
                continue
            diff = row.get(f"difference_vs_{kind}")
            delta = "" if diff is None or math.isnan(diff) else f" ({diff:+.1f} points)"
            parts.append(
                f"against {other} (`{row[f'{kind}_run']}`) it {_WORDS.get(verdict, verdict)}{delta}"
            )
        moved = self.newest_rules()
        worse = moved[moved["verdict_vs_last_good"] == "regressed"]["rule_id"].tolist()
        tail = f". Rules that regressed: {', '.join(worse)}." if worse else "."
        return "; ".join(parts) + tail

    def write(self, output_dir: str | os.PathLike[str]) -> Path:
        """``trend.json`` (the runs, newest verdicts) and ``history.parquet`` and
        ``history_by_rule.parquet`` in ``output_dir``; returns the JSON's path."""
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        regression = self.regression
        data = {
            "runs": self.by_run.to_dict("records"),
            "regressed": regression is not None,
            "newest_run": None if self.by_run.empty else str(self.by_run["run_id"].iloc[-1]),
        }
        text = json.dumps(data, indent=2, ensure_ascii=False, default=json_default)
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
                f"{row['last_good_run']} ({row['difference_vs_last_good']:+.1f} points)"
            )


def nightly_trend(
    store: StoreLike,
    *,
    assistant_id: str | None = None,
    rubric: str | None = None,
    since: Any = None,
    options: HistoryOptions | None = None,
) -> NightlyTrend:
    """:func:`evalkit.history` of ``store`` (a folder or URL) by run and by rule."""
    opts = options or HistoryOptions()
    picked = {"assistant_id": assistant_id, "rubric": rubric, "since": since, "options": opts}
    by_run = history(store, **picked)
    if rubric is None and not by_run.empty:  # by rule over the same scorecard as by run
        picked["rubric"] = str(by_run["rubric_version_id"].iloc[-1])
    return NightlyTrend(by_run, history(store, by="rule", **picked), opts)
