"""Nightly alarms for real changes: a confirmation rule across nights (no I/O).

A nightly gate that checks each night at 95% raises a false alarm about once every 20 nights,
and one whose error comes only from within a night pages the team whenever whole nights move
(a provider or a judge drifting a little from night to night). This rule asks for more:

* each night's statistic is a paired difference by cell against a *reference*: the
  last-known-good night pooled with up to ``window - 1`` good nights before it (pooling
  shrinks the reference's noise, which every later night shares). Cell means come first
  (repeats reduced within cells); the within-night error comes from the repeats within cells
  (pooled over cells, as a one-way ANOVA's error term) when both sides have repeats, else from
  the spread of the cell differences (the paired t);
* the series' between-night variance ``tau2`` (:mod:`evalkit.compare._between_nights`: a
  random night effect, estimated by the method of moments from successive nights) is added
  to it: ``tau2 * (sum(w_night**2) + sum(w_ref**2))``, ``w`` each pooled night's share of its
  side (1 for one night, ``1/k`` each for ``k`` equal nights). The degrees of freedom of the
  sum are Satterthwaite's (1946, "An approximate distribution of estimates of variance
  components", *Biometrics Bulletin* 2: 110-114) and the t statistic is mapped to the normal
  scale by its p-value, so a short history pays for its uncertain ``tau2`` with wider limits.
  A series of fewer than ``min_nights`` nights uses the within-night error alone and says so;
* a night whose difference is not below ``-floor`` points is ``ok``;
* ``regressed`` when the night alone is beyond ``single_z`` (a large drop), or when it and the
  night before are both at least ``low_z`` below and, pooled, beyond ``pair_z`` (two low
  nights confirm each other; the night before, the change's first night, is then no longer
  last-known-good and the regressed night is compared with the good night before it);
* ``suspect`` when the night alone is beyond ``suspect_z`` (worth a second look);
* only ``ok`` nights join the reference (a suspect night joins once the next night is ``ok``),
  so a lasting drop stays flagged.

This is a Shewhart chart with a moving average of span two beside it (Montgomery,
*Introduction to Statistical Quality Control*, 6.3.2 on supplementary run rules, 9.3 on the
moving-average chart), its limits on the scale of the nightly mean's whole variance, within
and between nights (Montgomery 6.4: an individuals chart's sigma is estimated from the
process, not from one sample), with the reference pooled as in a Phase I chart.
``benchmarks/bench_nightly.py`` measures it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Final, Literal

import pandas as pd
from scipy.special import ndtri, stdtr

from ._between_nights import BetweenNights, between_nights
from ._night_moments import Moments, Paired, paired

__all__ = [
    "ALARMS",
    "AlarmWatch",
    "NightAlarm",
    "NightStatistic",
    "NightlyRule",
    "night_statistic",
]

Alarm = Literal["suspect", "regressed"]
#: The alarms a night can raise (None: none).
ALARMS: Final = ("suspect", "regressed")


@dataclass(frozen=True)
class NightlyRule:
    """The nightly rule's knobs (z values are one-sided): ``suspect_z`` (one night worth a
    second look; 1.96 is 2.5%), ``single_z`` (one night is enough; 3.09 is 0.1%), ``pair_z``
    (two low nights pooled; 2.58 is 0.5%) with ``low_z`` (how low each of the two must be
    alone), ``window`` (good nights pooled as the reference), ``floor`` (points: a smaller
    drop is never flagged), ``between_nights`` (add the between-night variance; False: the
    within-night error alone), ``min_nights`` (nights before the between-night variance is
    used) and ``variance_window`` (the most recent nights it is estimated from)."""

    suspect_z: float = 1.96
    single_z: float = 3.09
    pair_z: float = 2.58
    low_z: float = 1.0
    window: int = 20
    floor: float = 2.5
    between_nights: bool = True
    min_nights: int = 4
    variance_window: int = 60

    def __post_init__(self) -> None:
        if not 0 < self.pair_z <= self.single_z:
            raise ValueError(
                f"NightlyRule: need 0 < pair_z <= single_z, got {self.pair_z}, {self.single_z}"
            )
        if not 0 <= self.low_z <= self.pair_z:
            raise ValueError(
                f"NightlyRule: need 0 <= low_z <= pair_z, got {self.low_z}, {self.pair_z}"
            )
        if not 0 < self.suspect_z <= self.single_z:
            raise ValueError(
                f"NightlyRule: need 0 < suspect_z <= single_z, got {self.suspect_z}, "
                f"{self.single_z}"
            )
        if self.window < 1:
            raise ValueError(f"NightlyRule.window must be >= 1 night, got {self.window}")
        if not self.floor >= 0:
            raise ValueError(f"NightlyRule.floor must be >= 0 points, got {self.floor}")
        if self.min_nights < 3:
            raise ValueError(f"NightlyRule.min_nights must be >= 3 nights, got {self.min_nights}")
        if self.variance_window < self.min_nights:
            raise ValueError(
                f"NightlyRule.variance_window must be >= min_nights ({self.min_nights}), "
                f"got {self.variance_window}"
            )


@dataclass(frozen=True)
class NightStatistic:
    """A night against its reference: ``difference`` (points, night - reference), its
    standard error ``se`` (within and, when used, between nights), ``z`` (normal scale),
    ``df`` (of the t it came from), the ``cells`` both have, ``method`` (of the within-night
    error), ``within_se`` (that error alone) and ``between`` (the between-night variance
    added; None: not added, ``variance`` says why)."""

    difference: float
    se: float
    z: float
    cells: int
    method: str
    df: float = math.inf
    within_se: float = math.nan
    between: BetweenNights | None = None
    variance: str = "within night"


def night_statistic(reference: pd.DataFrame, night: pd.DataFrame) -> NightStatistic | None:
    """The paired within-night statistic of ``night`` against ``reference`` (frames of
    conversation scores with ``cell_id`` and ``score``); None when they share no cell."""
    return _within(Moments.of_frame(reference), Moments.of_frame(night))


def _z(difference: float, se: float, df: float) -> float:
    """The t statistic on ``df`` degrees of freedom on the normal scale, by its p-value (the
    lower tail, so a large drop keeps its precision)."""
    if se <= 0:
        return 0.0 if difference == 0 else math.copysign(math.inf, difference)
    t = difference / se
    return -float(ndtri(stdtr(df, -t))) if t > 0 else float(ndtri(stdtr(df, t)))


def _within(ref: Moments, new: Moments) -> NightStatistic | None:
    one = paired(ref, new)
    if one is None:
        return None
    if not math.isfinite(one.se):
        return NightStatistic(one.difference, math.nan, math.nan, one.cells, one.method)
    z = _z(one.difference, one.se, one.df)
    return NightStatistic(one.difference, one.se, z, one.cells, one.method, one.df, one.se)


def _shares2(nights: list[Moments]) -> float:
    """Sum of squared shares of each night in a pooled side (``1/k`` for ``k`` equal nights):
    how much of one night's own movement the pooled side keeps."""
    sizes = [m.conversations for m in nights]
    total = sum(sizes)
    return sum((size / total) ** 2 for size in sizes) if total else 1.0


def _with_between(stat: NightStatistic, between: BetweenNights, factor: float) -> NightStatistic:
    """``stat`` with the between-night variance added, ``factor`` times (the night's shares
    squared plus the reference's)."""
    within2 = stat.se**2
    var = within2 + factor * between.tau2
    spread = factor**2 * between.variance_of_tau2() / 2.0  # Satterthwaite: Var(term) / 2
    df = var**2 / (within2**2 / stat.df + spread) if var > 0 else stat.df
    se = math.sqrt(var)
    words = (
        f"within night + between nights (SD {between.sd:.2f} points from {between.nights} nights)"
    )
    return NightStatistic(
        stat.difference,
        se,
        _z(stat.difference, se, df),
        stat.cells,
        stat.method,
        df,
        stat.se,
        between,
        words,
    )


@dataclass(frozen=True)
class NightAlarm:
    """One night judged: its ``statistic`` against the reference (None: the series' first
    night, or no cell in common), ``pair`` (the night before and this one pooled against the
    good nights before them; None on the first two nights), the ``alarm`` and ``why`` (words:
    which test fired)."""

    name: str
    statistic: NightStatistic | None
    pair: NightStatistic | None
    alarm: Alarm | None
    why: str


@dataclass
class AlarmWatch:
    """The rule applied night after night to one series (feed complete nights, oldest first).

    ``observe(name, scores)`` judges a night (:class:`NightAlarm`); an ``ok`` night becomes the
    last-known-good night and joins the reference. Every night's paired difference from the
    night before feeds the between-night variance."""

    rule: NightlyRule = field(default_factory=NightlyRule)
    _good: deque[tuple[str, Moments]] = field(init=False)
    _successive: deque[Paired] = field(init=False)
    _last: Moments | None = field(init=False, default=None)
    _pending: tuple[str, Moments] | None = field(init=False, default=None)
    _between: BetweenNights | None = field(init=False, default=None)
    _stale: bool = field(init=False, default=True)
    _good_names: list[str] = field(init=False, default_factory=list)
    _last_z: float = field(init=False, default=math.inf)
    _last_changed: bool = field(init=False, default=False)
    _last_step_added: bool = field(init=False, default=False)
    _pools: list[tuple[tuple[Moments, ...], Moments]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self._good = deque(maxlen=self.rule.window)
        self._successive = deque(maxlen=self.rule.variance_window - 1)

    @property
    def good_nights(self) -> list[str]:
        """Every night that was last-known-good (no alarm, and not found the next night to
        be the first of a change), oldest first."""
        return list(self._good_names)

    @property
    def reference_runs(self) -> list[str]:
        """The good nights now pooled as the reference, oldest first."""
        return [name for name, _ in self._good]

    @property
    def last_good(self) -> str | None:
        """The last-known-good night (None before the first)."""
        return self._good[-1][0] if self._good else None

    @property
    def between(self) -> BetweenNights | None:
        """The between-night variance the next night's comparison adds (None: fewer than
        ``min_nights`` nights, or the rule's ``between_nights`` is off)."""
        rule = self.rule
        if not rule.between_nights or len(self._successive) < rule.min_nights - 1:
            return None
        if self._stale:
            self._between = between_nights(list(self._successive))
            self._stale = False
        return self._between

    def statistic(self, *nights: Moments) -> NightStatistic | None:
        """``nights`` (one, or several pooled) against the reference without them, the
        between-night variance added when the series has enough nights (no state changes)."""
        reference = [m for _, m in self._good if all(m is not n for n in nights)]
        if not reference or not nights:
            return None
        new = nights[0] if len(nights) == 1 else Moments.pooled(list(nights))
        stat = _within(self._pooled(reference), new)
        if stat is None or not math.isfinite(stat.se):
            return stat
        between = self.between
        if between is None:
            return _fallback(stat, self.rule, len(self._successive) + 1)
        return _with_between(stat, between, _shares2(list(nights)) + _shares2(reference))

    def _pooled(self, reference: list[Moments]) -> Moments:
        """The reference nights pooled (kept while they are the same nights: a night's
        reference and its pair's, without the night before, are asked for every night)."""
        for nights, pool in self._pools:
            if len(nights) == len(reference) and all(
                a is b for a, b in zip(nights, reference, strict=True)
            ):
                return pool
        pool = Moments.pooled(reference)
        self._pools = [*self._pools[-1:], (tuple(reference), pool)]
        return pool

    def decide(
        self, stat: NightStatistic | None, pair: NightStatistic | None
    ) -> tuple[Alarm | None, str]:
        """The alarm for a night with statistic ``stat`` and ``pair`` (it and the night
        before pooled), and why."""
        rule = self.rule
        if stat is None or not math.isfinite(stat.z):
            return None, ""
        if stat.difference > -rule.floor:
            return None, f"less than {rule.floor:g} points below the reference"
        if stat.z <= -rule.single_z:
            return "regressed", f"one night far below the reference (z {stat.z:.2f})"
        if pair is not None and self._two_low(stat, pair):
            return "regressed", f"two low nights together (z {pair.z:.2f})"
        if stat.z <= -rule.suspect_z:
            return "suspect", f"one bad night (z {stat.z:.2f}): regressed if the next agrees"
        return None, f"within the noise (z {stat.z:.2f})"

    def _two_low(self, stat: NightStatistic, pair: NightStatistic) -> bool:
        """The night and the one before both at least ``low_z`` below, together beyond
        ``pair_z`` and ``floor`` points."""
        return (
            math.isfinite(pair.z)
            and stat.z <= -self.rule.low_z
            and self._last_z <= -self.rule.low_z
            and pair.difference <= -self.rule.floor
            and pair.z <= -self.rule.pair_z
        )

    def observe(self, name: str, scores: pd.DataFrame) -> NightAlarm:
        """Judge one night (``scores``: ``cell_id``, ``score``) and update the state."""
        return self.observe_moments(name, Moments.of_frame(scores))

    def observe_moments(self, name: str, night: Moments) -> NightAlarm:
        """:meth:`observe` on a night already reduced per cell."""
        stat = self.statistic(night)
        pair = self.statistic(self._last, night) if self._last is not None else None
        alarm, why = self.decide(stat, pair)
        changed = alarm == "regressed"
        if changed and stat is not None and pair is not None and self._two_low(stat, pair):
            self._change_began_last_night()
        if alarm is None:
            if self._pending is not None:  # the night before was suspect, not confirmed
                self._good.append(self._pending)
            self._good.append((name, night))
            self._good_names.append(name)
        self._pending = (name, night) if alarm == "suspect" else None
        self._add_step(night, changed)
        self._last, self._last_changed = night, changed
        self._last_z = stat.z if stat is not None and math.isfinite(stat.z) else math.inf
        return NightAlarm(name, stat, pair, alarm, why)

    def _change_began_last_night(self) -> None:
        """Two low nights confirmed a change: the night before was its first night, not a
        good one, and the step into it is not a night-to-night movement."""
        if self._good and self._good[-1][1] is self._last:
            retracted, _ = self._good.pop()
            self._good_names.remove(retracted)
        if not self._last_changed and self._last_step_added:
            self._successive.pop()
            self._stale = True
        self._last_changed = True

    def _add_step(self, night: Moments, changed: bool) -> None:
        """The successive difference from the night before feeds the between-night variance,
        unless it steps into or out of a confirmed change."""
        self._last_step_added = False
        if self._last is None or changed != self._last_changed:
            return
        step = paired(self._last, night)
        if step is not None:
            self._successive.append(step)
            self._stale = True
            self._last_step_added = True


def _fallback(stat: NightStatistic, rule: NightlyRule, nights: int) -> NightStatistic:
    if not rule.between_nights:
        why = "within night only (between-night variance off)"
    elif nights < rule.min_nights:
        why = (
            f"within night only (short series: {nights} night{'s' * (nights != 1)} before it, "
            f"the between-night variance needs {rule.min_nights})"
        )
    else:
        why = "within night only (too few nights with a within-night error)"
    return NightStatistic(
        stat.difference, stat.se, stat.z, stat.cells, stat.method, stat.df, stat.se, None, why
    )
