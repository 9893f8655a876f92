"""Nightly alarms for real changes: a confirmation rule across nights (no I/O).

A nightly gate that checks each night at 95% raises a false alarm about once every 20 nights.
This rule asks for more before it calls a night ``regressed``:

* each night's statistic is a paired difference by cell against a *reference*: the
  last-known-good night pooled with up to ``window - 1`` good nights before it (pooling
  shrinks the reference's noise, which otherwise every later night shares). Cell means come
  first (repeats reduced within cells); the standard error comes from the repeats within
  cells (pooled over cells, as a one-way ANOVA's error term) when both sides have repeats,
  else from the spread of the cell differences (the paired t). The t statistic is mapped to
  the normal scale by its p-value (so thresholds are on one scale whatever the df);
* a night whose difference is not below ``-floor`` points is ``ok``;
* ``regressed`` at once when ``z <= -single_z`` (a large single-night drop);
* ``suspect`` when ``z <= -suspect_z``; a suspect night that follows a flagged night (the
  night before in the series was suspect or regressed) is ``regressed`` (confirmed);
* only ``ok`` nights join the reference, so a lasting drop stays flagged.

This is a two-stage confirmation rule (a Shewhart chart with a supplementary "two in a row"
run rule; Montgomery, *Introduction to Statistical Quality Control*, 6.3.2), with the
reference pooled as in a Phase I chart. ``benchmarks/bench_nightly.py`` measures it: false
alarms over 100 unchanged nights of the demo's grid, and nights to flag a lasting drop.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats as st

__all__ = ["ALARMS", "AlarmWatch", "NightStatistic", "NightlyRule", "night_statistic"]

Alarm = Literal["suspect", "regressed"]
#: The alarms a night can raise (None: none).
ALARMS: Final = ("suspect", "regressed")
_MIN_WITHIN_DF: Final = 10


@dataclass(frozen=True)
class NightlyRule:
    """The confirmation rule's knobs: ``suspect_z`` (one-sided, a night worth a second look;
    1.96 is 2.5%), ``single_z`` (one night is enough; 3.09 is 0.1%), ``window`` (good nights
    pooled as the reference) and ``floor`` (points: a smaller drop is never flagged)."""

    suspect_z: float = 1.96
    single_z: float = 3.09
    window: int = 5
    floor: float = 2.5

    def __post_init__(self) -> None:
        if not 0 < self.suspect_z <= self.single_z:
            raise ValueError(
                f"NightlyRule: need 0 < suspect_z <= single_z, got {self.suspect_z}, "
                f"{self.single_z}"
            )
        if self.window < 1:
            raise ValueError(f"NightlyRule.window must be >= 1 night, got {self.window}")
        if not self.floor >= 0:
            raise ValueError(f"NightlyRule.floor must be >= 0 points, got {self.floor}")


@dataclass(frozen=True)
class NightStatistic:
    """A night against its reference: ``difference`` (points, night - reference), its
    standard error ``se``, ``z`` (normal scale), the ``cells`` both have and ``method``."""

    difference: float
    se: float
    z: float
    cells: int
    method: str


@dataclass(frozen=True)
class _Moments:
    """Per cell (sorted ids): count, mean and sum of squared deviations of its scores."""

    cells: NDArray[np.str_]
    n: NDArray[np.float64]
    mean: NDArray[np.float64]
    ss: NDArray[np.float64]

    @classmethod
    def of(cls, cell_ids: NDArray[np.str_], scores: NDArray[np.float64]) -> _Moments:
        keep = ~np.isnan(scores)
        cells, codes = np.unique(cell_ids[keep], return_inverse=True)
        x = scores[keep]
        n = np.bincount(codes, minlength=len(cells)).astype(float)
        mean = np.bincount(codes, weights=x, minlength=len(cells)) / np.maximum(n, 1)
        ss = np.bincount(codes, weights=(x - mean[codes]) ** 2, minlength=len(cells)).astype(float)
        return cls(cells, n, mean, ss)


def _arrays(frame: pd.DataFrame) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    return (
        frame["cell_id"].astype(str).to_numpy(dtype=str),
        frame["score"].to_numpy(dtype=np.float64, na_value=np.nan),
    )


def night_statistic(reference: pd.DataFrame, night: pd.DataFrame) -> NightStatistic | None:
    """The paired statistic of ``night`` against ``reference`` (frames of conversation scores
    with ``cell_id`` and ``score``); None when they share no cell."""
    return _statistic(_Moments.of(*_arrays(reference)), _Moments.of(*_arrays(night)))


def _statistic(ref: _Moments, new: _Moments) -> NightStatistic | None:
    common, ir, in_ = np.intersect1d(ref.cells, new.cells, assume_unique=True, return_indices=True)
    cells = len(common)
    if cells == 0:
        return None
    n_r, n_n = ref.n[ir], new.n[in_]
    diffs = new.mean[in_] - ref.mean[ir]
    difference = float(diffs.mean())
    df_r, df_n = float((n_r - 1).sum()), float((n_n - 1).sum())
    if df_r >= _MIN_WITHIN_DF and df_n >= _MIN_WITHIN_DF:
        var_r = float(ref.ss[ir].sum()) / df_r
        var_n = float(new.ss[in_].sum()) / df_n
        a, b = var_r * float((1 / n_r).sum()), var_n * float((1 / n_n).sum())
        se = math.sqrt(a + b) / cells
        # Welch-Satterthwaite df of the two pooled variances
        df = (a + b) ** 2 / (a * a / df_r + b * b / df_n) if a + b > 0 else df_r + df_n
        method = "within-cell variance"
    elif cells >= 3:
        se = float(np.std(diffs, ddof=1)) / math.sqrt(cells)
        df = cells - 1
        method = "paired t over cells"
    else:
        return NightStatistic(difference, math.nan, math.nan, cells, "too few cells")
    if se <= 0:
        z = 0.0 if difference == 0 else math.copysign(math.inf, difference)
    else:
        z = float(st.norm.ppf(st.t.cdf(difference / se, df)))
    return NightStatistic(difference, se, z, cells, method)


@dataclass
class AlarmWatch:
    """The rule applied night after night to one series (feed complete nights, oldest first).

    ``observe(scores)`` returns the night's statistic against the reference (None for the first
    night) and its alarm (None, ``"suspect"`` or ``"regressed"``); an ``ok`` night becomes the
    last-known-good night and joins the reference."""

    rule: NightlyRule = field(default_factory=NightlyRule)
    _good: deque[tuple[str, NDArray[np.str_], NDArray[np.float64]]] = field(init=False)
    _flagged: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self._good = deque(maxlen=self.rule.window)

    @property
    def reference_runs(self) -> list[str]:
        """The good nights now pooled as the reference, oldest first."""
        return [name for name, _, _ in self._good]

    @property
    def last_good(self) -> str | None:
        """The last-known-good night (None before the first)."""
        return self._good[-1][0] if self._good else None

    def decide(self, stat: NightStatistic | None) -> Alarm | None:
        """The alarm for a night with statistic ``stat`` (None: nothing to compare)."""
        rule = self.rule
        if stat is None or not math.isfinite(stat.z) or stat.difference > -rule.floor:
            return None
        if stat.z <= -rule.single_z:
            return "regressed"
        if stat.z <= -rule.suspect_z:
            return "regressed" if self._flagged else "suspect"
        return None

    def observe(
        self, name: str, scores: pd.DataFrame
    ) -> tuple[NightStatistic | None, Alarm | None]:
        """Judge one night (``scores``: ``cell_id``, ``score``) and update the state."""
        cell_ids, values = _arrays(scores)
        stat = None
        if self._good:
            ref = _Moments.of(
                np.concatenate([c for _, c, _ in self._good]),
                np.concatenate([v for _, _, v in self._good]),
            )
            stat = _statistic(ref, _Moments.of(cell_ids, values))
        alarm = self.decide(stat)
        self._flagged = alarm is not None
        if alarm is None:
            self._good.append((name, cell_ids, values))
        return stat, alarm
