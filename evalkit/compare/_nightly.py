"""The nightly rule as a public function of nights kept anywhere: :func:`nightly_alarms` takes
the nights in order (one grades table or one conversation-score table a night) and returns
each night's alarm, statistic and the variance it used, the rule of
:mod:`evalkit.compare._alarms`. ``evalkit.history``, its gate, the trend notebook and the
viewer read their alarms from this function."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, TypeAlias

import pandas as pd

from .._results import Result, json_records
from ..grading import GradesLike, as_grades_frame, conversation_points
from ._alarms import AlarmWatch, NightAlarm, NightlyRule, NightStatistic
from ._night_moments import Moments

__all__ = ["NIGHTLY_COLUMNS", "NightlyAlarms", "Nights", "night_scores", "nightly_alarms"]

#: The columns of :attr:`NightlyAlarms.nights`, one row per night.
NIGHTLY_COLUMNS: Final = (
    "night",
    "conversations",
    "cells",
    "alarm",
    "why",
    "difference",
    "se",
    "z",
    "df",
    "pair_difference",
    "pair_z",
    "within_se",
    "between_sd",
    "variance_nights",
    "variance",
    "last_good",
    "reference_nights",
    "good",
)

#: Nights in order: name -> table, or a sequence of tables (named ``night 1``, ``night 2``...).
#: A table is a grades table (``Grades`` or its frame: conversation x rule rows) or a
#: conversation-score table (``cell_id``, ``score`` 0-100, one row per conversation).
Nights: TypeAlias = Mapping[str, GradesLike | pd.DataFrame] | Sequence[GradesLike | pd.DataFrame]


def night_scores(night: GradesLike | pd.DataFrame) -> pd.DataFrame:
    """One row per conversation: its ``cell_id`` and ``score`` (0-100), what the rule reads.
    A conversation-score table (``cell_id`` and ``score``, no ``rule_id``) is taken as it is;
    anything else is read as grades (points awarded over points applicable)."""
    if (
        isinstance(night, pd.DataFrame)
        and {"cell_id", "score"} <= set(night.columns)
        and "rule_id" not in night.columns
    ):
        return night[["cell_id", "score"]]
    grades = as_grades_frame(night)
    missing = [c for c in ("conversation_id", "cell_id") if c not in grades.columns]
    if missing:
        raise ValueError(
            f"nightly_alarms: a night's table needs columns {missing} (grades), or cell_id and "
            "score (conversation scores)"
        )
    points = conversation_points(grades)
    cells = grades.drop_duplicates("conversation_id").set_index("conversation_id")["cell_id"]
    cell_ids = cells.reindex(points.index.astype(str)).astype(str).to_numpy()
    return pd.DataFrame({"cell_id": cell_ids, "score": points["score"].to_numpy()})


def _named(nights: Nights) -> list[tuple[str, GradesLike | pd.DataFrame]]:
    if isinstance(nights, Mapping):
        return [(str(name), table) for name, table in nights.items()]
    if isinstance(nights, pd.DataFrame | str | bytes):
        raise TypeError(
            "nightly_alarms: nights are a mapping name -> table or a sequence of tables, one "
            f"a night (got one {type(nights).__name__})"
        )
    return [(f"night {i}", table) for i, table in enumerate(nights, start=1)]


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _row(judged: NightAlarm, night: Moments, last_good: str | None, refs: int) -> dict[str, Any]:
    stat: NightStatistic | None = judged.statistic
    between = None if stat is None else stat.between
    return {
        "night": judged.name,
        "conversations": night.conversations,
        "cells": len(night.cells),
        "alarm": judged.alarm,
        "why": judged.why,
        "difference": _number(None if stat is None else stat.difference),
        "se": _number(None if stat is None else stat.se),
        "z": _number(None if stat is None else stat.z),
        "df": _number(None if stat is None else stat.df),
        "pair_difference": _number(None if judged.pair is None else judged.pair.difference),
        "pair_z": _number(None if judged.pair is None else judged.pair.z),
        "within_se": _number(None if stat is None else stat.within_se),
        "between_sd": _number(None if between is None else between.sd),
        "variance_nights": 0 if between is None else between.nights,
        "variance": "" if stat is None else stat.variance,
        "last_good": last_good,
        "reference_nights": refs,
    }


def nightly_alarms(nights: Nights, *, options: NightlyRule | None = None) -> NightlyAlarms:
    """The nightly rule over ``nights`` (oldest first; see :data:`Nights`), one row a night.

    Each night is compared with the good nights before it (the last-known-good pooled with
    up to ``options.window - 1`` more), paired by cell, its standard error within the night
    plus the series' between-night variance (estimated from successive nights; a series of
    fewer than ``options.min_nights`` nights uses the within-night error alone and says so
    in ``variance``). ``regressed`` when one night is beyond ``single_z``, or it and the
    night before together beyond ``pair_z``; ``suspect`` for one bad night. Only complete
    nights belong here (a partial night is not a night of the series). See
    :mod:`evalkit.compare._alarms` for the method and its papers."""
    rule = options or NightlyRule()
    watch = AlarmWatch(rule)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, table in _named(nights):
        if name in seen:
            raise ValueError(f"nightly_alarms: night {name!r} appears twice")
        seen.add(name)
        night = Moments.of_frame(night_scores(table))
        before = watch.last_good
        judged = watch.observe_moments(name, night)
        last_good = before if judged.alarm is None else watch.last_good
        rows.append(_row(judged, night, last_good, len(watch.reference_runs)))
    good = set(watch.good_nights)
    for row in rows:
        row["good"] = row["night"] in good
    frame = pd.DataFrame(rows, columns=list(NIGHTLY_COLUMNS))
    frame["good"] = frame["good"].astype(bool)
    for column in ("alarm", "last_good"):
        frame[column] = frame[column].astype("object").where(frame[column].notna(), None)
    return NightlyAlarms(frame, rule)


@dataclass(frozen=True, repr=False)
class NightlyAlarms(Result):
    """The nightly rule over a series: ``nights`` (one row a night, :data:`NIGHTLY_COLUMNS`)
    and the ``rule`` it applied. ``headline()`` is the newest night's alarm, ``summary`` the
    nights, ``regressed`` whether the newest night regressed (what a gate fails on)."""

    nights: pd.DataFrame
    rule: NightlyRule

    @property
    def summary(self) -> pd.DataFrame:
        return self.nights

    @property
    def newest(self) -> dict[str, Any] | None:
        """The newest night's row (None: no night)."""
        return None if self.nights.empty else dict(self.nights.iloc[-1])

    @property
    def regressed(self) -> bool:
        """Whether the newest night is ``regressed`` (confirmed)."""
        newest = self.newest
        return newest is not None and newest["alarm"] == "regressed"

    @property
    def alarms(self) -> pd.DataFrame:
        """The nights with an alarm (suspect or regressed)."""
        flagged: pd.DataFrame = self.nights[self.nights["alarm"].notna()]
        return flagged.reset_index(drop=True)

    def headline(self) -> str:
        newest = self.newest
        if newest is None:
            return "No nights to judge."
        name, alarm = newest["night"], newest["alarm"]
        counts = self.nights["alarm"].value_counts()
        tally = f"{int(counts.get('regressed', 0))} of {len(self.nights)} nights regressed"
        if not math.isfinite(newest["difference"]):
            return f"{name}: nothing to compare it with ({tally})."
        against = f"{newest['difference']:+.1f} points against the good nights before it"
        verdict = {"regressed": "regressed", "suspect": "is suspect"}.get(str(alarm), "no alarm")
        return f"{name}: {verdict}, {against} ({newest['why']}; {newest['variance']}); {tally}."

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "regressed": self.regressed,
            "rule": asdict(self.rule),
            "nights": json_records(self.nights),
        }
