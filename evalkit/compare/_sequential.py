"""Sequential draft-vs-prod comparisons: look after each wave, stop when the verdict settles.

A :class:`SequentialPlan` runs the grid in waves of one repeat per cell on both sides and
looks after each wave. Look ``k`` of ``K`` (information fraction ``k / K``) compares the first
``k`` repeats of every cell with the design's own variance method (:mod:`evalkit.stats`), at
a nominal confidence from the plan's boundary:

``group_sequential`` (default)
    Lan-DeMets alpha spending, Hwang-Shih-DeCani ``gamma = -4`` (O'Brien-Fleming-like):
    almost nothing is spent early, so the last look keeps nearly the fixed design's power.
    The interval at each look is a repeated confidence interval (Jennison & Turnbull 1989):
    all of them hold the truth together with the plan's confidence.
``confidence_sequence``
    An always-valid normal-mixture boundary (Howard et al. 2021): valid however often and
    whenever a team looks, at the price of wider intervals.

Futility (``futility=True``): a non-binding beta-spending boundary (``(1 - power) t``, linear:
 chosen by measurement over shapes 1, 1.5 and 2 on the demo grid)
under the plan's ``effect``, with the drift estimated from the current standard error: when
``|z|`` falls below it, showing ``effect`` has become unlikely and the comparison stops with
``no_difference`` if the interval lies within ``+-min_effect`` and ``insufficient_evidence``
("stopped for futility") otherwise. Non-binding: the efficacy bounds ignore it, so alpha holds
whether a team stops or goes on.

Point estimates after an early stop are biased away from zero (the stop happened because the
estimate was large); the comparison says so and its verdict reads the interval only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from .. import stats as st
from ..grading import Grades, GradesLike, as_grades_frame
from ._compare import compare_grades
from ._comparison import Comparison, rules_left_out
from ._options import CompareOptions, check_levels
from ._verdict import Verdict

__all__ = [
    "SEQUENTIAL_METHODS",
    "LookEvidence",
    "SequentialPlan",
    "compare_sequential",
    "decide_look",
    "first_repeats",
    "look_z",
]

SEQUENTIAL_METHODS = ("group_sequential", "confidence_sequence")
#: Per-conversation standard deviation of a score within a cell, in points, assumed by
#: :meth:`SequentialPlan.expected_conversations` when none is given (the demo's is 24-30).
DEFAULT_SD = 30.0
_THETA_STEP = 0.05  # futility bounds are interpolated between drifts this far apart
_THETA_MAX = 12.0
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class SequentialPlan:
    """How a sequential comparison looks and stops (module docstring).

    ``max_repeats``: waves at most (None: the grid's repeats); ``confidence``: the overall
    confidence over all looks; ``min_effect``: the margin of ``no_difference``; ``effect`` and
    ``power``: the difference the plan is powered for and the power kept (futility spends
    ``1 - power``); ``method``: ``group_sequential`` or ``confidence_sequence``; ``futility``:
    stop when ``effect`` has become unlikely to be shown; ``stop_when_non_inferior``: stop as
    soon as the one-sided bound shows the candidate is not worse by more than ``min_effect``
    (a CI gate that needs no more; its error is at most half the plan's alpha, the bound being
    one side of the repeated interval); ``spending`` and ``gamma``: the
    alpha-spending function (``hsd``, ``obf``, ``pocock``); ``futility_shape``: the exponent of
    the beta-spending function.
    """

    max_repeats: int | None = None
    _: KW_ONLY
    confidence: float = 0.95
    min_effect: float = 5.0
    effect: float = 10.0
    power: float = 0.9
    method: str = "group_sequential"
    futility: bool = True
    stop_when_non_inferior: bool = False
    spending: str = "hsd"
    gamma: float = -4.0
    futility_shape: float = 1.0

    def __post_init__(self) -> None:
        if self.max_repeats is not None and (
            not isinstance(self.max_repeats, int) or self.max_repeats < 1
        ):
            raise ValueError(f"max_repeats must be a whole number >= 1, got {self.max_repeats!r}")
        check_levels(self.confidence, self.min_effect, "SequentialPlan")
        if not 0.0 < self.power < 1.0:
            raise ValueError(f"SequentialPlan.power must be in (0, 1), got {self.power}")
        if self.effect <= 0:
            raise ValueError(f"SequentialPlan.effect must be > 0 points, got {self.effect}")
        if self.method not in SEQUENTIAL_METHODS:
            raise ValueError(f"method must be one of {SEQUENTIAL_METHODS}, got {self.method!r}")
        st.spent_alpha([1.0], 1.0 - self.confidence, self.spending, self.gamma)  # validates
        # boundaries are computed once per plan and number of looks (not a field: not compared,
        # not recorded)
        object.__setattr__(self, "_memo", {})

    def _memoised(self, key: tuple[Any, ...], compute: Callable[[], FloatArray]) -> FloatArray:
        memo: dict[tuple[Any, ...], FloatArray] = self.__dict__["_memo"]
        if key not in memo:
            memo[key] = compute()
        return memo[key].copy()

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    def _looks(self, max_repeats: int | None) -> int:
        k = max_repeats if max_repeats is not None else self.max_repeats
        if k is None:
            raise ValueError("the plan has no max_repeats: give the grid's repeats")
        return int(k)

    def fractions(self, max_repeats: int | None = None) -> FloatArray:
        """Information fractions of the looks, ``k / K``."""
        k = self._looks(max_repeats)
        return np.arange(1, k + 1, dtype=np.float64) / k

    def efficacy_z(self, max_repeats: int | None = None) -> FloatArray:
        """Two-sided critical z of each look."""
        t = self.fractions(max_repeats)
        if self.method == "confidence_sequence":
            return self._memoised(
                ("efficacy", t.size), lambda: st.confidence_sequence_bounds(t, self.alpha)
            )
        return self._memoised(
            ("efficacy", t.size),
            lambda: st.efficacy_bounds(t, self.alpha, self.spending, self.gamma),
        )

    def _futility_bounds(self, max_repeats: int, theta: float) -> FloatArray:
        """Every look's futility bound for the drift ``theta`` (beta spending)."""
        t, c = self.fractions(max_repeats), self.efficacy_z(max_repeats)
        return self._memoised(
            ("futility", max_repeats, theta),
            lambda: st.futility_bounds(t, c, theta, 1.0 - self.power, self.futility_shape),
        )

    def nominal_confidence(self, max_repeats: int | None = None) -> FloatArray:
        """The two-sided confidence each look's interval is computed at."""
        return np.asarray(1.0 - 2.0 * sps.norm.sf(self.efficacy_z(max_repeats)))

    def futility_z(self, look: int, max_repeats: int, theta: ArrayLike) -> FloatArray:
        """The futility bound of ``look`` for drifts ``theta`` (vectorised; 0 without
        futility and at the last look), interpolated linearly between drifts
        ``0.05`` apart so that every caller gets the same value."""
        th = np.clip(np.abs(np.asarray(theta, dtype=np.float64)), 0.0, _THETA_MAX)
        out = np.zeros(th.shape)
        if not self.futility or look >= max_repeats:
            return out
        finite = np.isfinite(th)
        if not finite.any():
            return out
        index = np.floor(np.where(finite, th, 0.0) / _THETA_STEP).astype(np.int64)
        needed = np.unique(np.concatenate([index[finite], index[finite] + 1]))
        values = np.asarray(
            [self._futility_bounds(max_repeats, i * _THETA_STEP)[look - 1] for i in needed]
        )
        lo = values[np.searchsorted(needed, np.where(finite, index, needed[0]))]
        hi = values[np.searchsorted(needed, np.where(finite, index + 1, needed[0]))]
        w = np.where(finite, th / _THETA_STEP - index, 0.0)
        return np.asarray(np.where(finite, lo + w * (hi - lo), 0.0))

    def theta(self, effect: float, se_full: float) -> float:
        """The drift of ``effect`` at full information, in standard errors."""
        return abs(effect) / se_full

    def _se_full(self, cells: int, max_repeats: int, sd: float | None) -> float:
        s = DEFAULT_SD if sd is None else float(sd)
        return math.sqrt(2.0 * s * s / (cells * max_repeats))

    def boundaries(
        self, max_repeats: int | None = None, *, cells: int | None = None, sd: float | None = None
    ) -> pd.DataFrame:
        """One row per look: information fraction, efficacy z, nominal confidence, alpha spent
        by then, and (with ``cells``) the futility z under the plan's effect with ``sd``."""
        k = self._looks(max_repeats)
        t, c = self.fractions(k), self.efficacy_z(k)
        frame = pd.DataFrame(
            {
                "look": np.arange(1, k + 1),
                "information_fraction": t,
                "efficacy_z": c,
                "nominal_confidence": self.nominal_confidence(k),
                "alpha_spent": self._memoised(
                    ("alpha_spent", k), lambda: np.cumsum(st.stopping_probabilities(t, c).efficacy)
                ),
            }
        )
        if cells is not None and self.futility:
            theta = self.theta(self.effect, self._se_full(cells, k, sd))
            frame["futility_z"] = self._futility_bounds(k, theta)
        return frame

    def stop_probabilities(
        self, effect: float, cells: int, *, max_repeats: int | None = None, sd: float | None = None
    ) -> pd.DataFrame:
        """Per look, the chance of stopping for efficacy and for futility when the true
        difference is ``effect`` points (normal approximation)."""
        k = self._looks(max_repeats)
        t, c = self.fractions(k), self.efficacy_z(k)
        se_full = self._se_full(cells, k, sd)
        f = self._futility_bounds(k, self.theta(self.effect, se_full)) if self.futility else None
        p = st.stopping_probabilities(t, c, f, effect / se_full)
        return pd.DataFrame(
            {
                "look": np.arange(1, k + 1),
                "reach": p.reach,
                "efficacy": p.efficacy,
                "futility": p.futility,
            }
        )

    def expected_conversations(
        self, effect: float, cells: int, *, max_repeats: int | None = None, sd: float | None = None
    ) -> float:
        """Expected conversations (both sides) when the true difference is ``effect`` points;
        ``sd`` is the per-conversation score SD within a cell (default :data:`DEFAULT_SD`)."""
        k = self._looks(max_repeats)
        probs = self.stop_probabilities(effect, cells, max_repeats=k, sd=sd)
        return float(2 * cells * probs["reach"].sum())

    def maximum_conversations(self, cells: int, max_repeats: int | None = None) -> int:
        """Conversations (both sides) if no look stops."""
        return 2 * cells * self._looks(max_repeats)


def look_z(estimate: ArrayLike, se: ArrayLike, df: ArrayLike) -> FloatArray:
    """The z statistic with the same tail probability as ``estimate / se`` on ``df``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.asarray(estimate, dtype=np.float64) / np.asarray(se, dtype=np.float64)
        p = sps.t.sf(np.abs(t), np.asarray(df, dtype=np.float64))
        return np.asarray(np.sign(t) * sps.norm.isf(p))


def _repeats(frame: pd.DataFrame) -> NDArray[np.int64]:
    """0-based repeat of each row: the ``repeat`` column, or the order within the cell."""
    if "repeat" in frame.columns and not frame["repeat"].isna().any():
        return frame["repeat"].to_numpy(dtype=np.int64)
    firsts = frame.drop_duplicates("conversation_id")[["conversation_id", "cell_id"]]
    firsts = firsts.sort_values(["cell_id", "conversation_id"])
    order = firsts.groupby("cell_id").cumcount()
    by_id = dict(zip(firsts["conversation_id"], order, strict=True))
    return frame["conversation_id"].map(by_id).to_numpy(dtype=np.int64)


def first_repeats(frame: pd.DataFrame, repeats: int) -> pd.DataFrame:
    """The rows of each cell's first ``repeats`` repeats (what a look or a wave had seen)."""
    return frame.loc[_repeats(frame) < repeats]


@dataclass(frozen=True)
class LookDecision:
    """What one look decided (vectorised over trials in calibration)."""

    stop: Any
    stopped_for: Any  # "efficacy", "equivalence", "futility", "last look" or ""
    z: Any
    futility_z: Any
    conditional_power: Any


@dataclass(frozen=True)
class LookEvidence:
    """What a look saw (arrays over trials, or scalars): the verdict at the look's nominal
    confidence, the estimate with its standard error and degrees of freedom, and whether the
    one-sided bound showed non-inferiority."""

    verdict: Any
    estimate: Any
    se: Any
    df: Any
    non_inferior: Any = False

    @classmethod
    def of(cls, decision: Any) -> LookEvidence:
        """From a :class:`~evalkit.compare._decision.Decision` (the array path)."""
        iv = decision.interval
        return cls(decision.verdict, iv.estimate, iv.se, iv.df, decision.non_inferior)


def decide_look(
    plan: SequentialPlan, look: int, max_repeats: int, evidence: LookEvidence
) -> LookDecision:
    """Stop or go on at ``look`` from what the look saw (:class:`LookEvidence`)."""
    t = look / max_repeats
    se = evidence.se
    z = look_z(evidence.estimate, se, evidence.df)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = plan.effect / (np.asarray(se, dtype=np.float64) * math.sqrt(t))
        theta = np.where(np.isfinite(theta), theta, np.nan)
    f = plan.futility_z(look, max_repeats, theta)
    c_final = float(plan.efficacy_z(max_repeats)[-1])
    # in the direction the estimate points, for the planned effect
    cp = st.conditional_power(np.abs(np.nan_to_num(z)), t, np.nan_to_num(theta), c_final)
    v = np.asarray(evidence.verdict, dtype=object)
    moved = np.isin(v, [Verdict.IMPROVED, Verdict.REGRESSED])
    equivalent = v == Verdict.NO_DIFFERENCE
    shown = np.asarray(evidence.non_inferior, dtype=bool) & plan.stop_when_non_inferior
    futile = (~moved) & (~equivalent) & np.isfinite(z) & (np.abs(z) < f)
    last = look >= max_repeats
    stopped_for = np.select(
        [moved, equivalent, shown, futile, np.full(v.shape, last)],
        ["efficacy", "equivalence", "non-inferior", "futility", "last look"],
        default="",
    )
    stop = stopped_for != ""
    if np.ndim(stop) == 0:
        return LookDecision(bool(stop), str(stopped_for), float(z), float(f), float(cp))
    return LookDecision(stop, stopped_for, z, f, cp)


def _first_looks(given: GradesLike, frame: pd.DataFrame, look: int) -> GradesLike:
    """The first ``look`` repeats of ``given``'s grades, a :class:`Grades` keeping its
    left-out count."""
    kept = first_repeats(frame, look)
    if isinstance(given, Grades):
        return replace(given, frame=kept, _scores=[])
    return kept


def compare_sequential(
    baseline: GradesLike,
    candidate: GradesLike,
    plan: SequentialPlan,
    look: int | None = None,
    *,
    options: CompareOptions | None = None,
) -> Comparison:
    """Look ``look`` of a sequential comparison: the first ``look`` repeats of every cell.

    ``look`` None: as many repeats as both sides have. The interval is adjusted for the looks
    (computed at the look's nominal confidence, so that all looks' intervals hold the truth
    together with ``plan.confidence``); ``Comparison.stop`` says whether this look decides;
    ``summary`` gains ``look``, ``looks_planned``, ``information_fraction``, ``alpha_spent``,
    ``nominal_confidence``, ``efficacy_z``, ``futility_z``, ``z``, ``conditional_power``,
    ``sequential_method`` and ``stopped_for``. ``options`` are :func:`compare_grades`'s (a
    :class:`~evalkit.grading.Grades` brings its left-out count as there); ``confidence`` and
    ``min_effect`` come from the plan (the options' are not read).
    """
    frames = [as_grades_frame(g) for g in (baseline, candidate)]
    have = [int(_repeats(f).max()) + 1 if len(f) else 0 for f in frames]
    max_repeats = plan.max_repeats or max(have)
    if look is None:
        look = min(min(have), max_repeats)
    if not 1 <= look <= max_repeats:
        raise ValueError(f"look must be in 1..{max_repeats}, got {look}")
    bound = plan.boundaries(max_repeats).iloc[look - 1]
    nominal = float(bound["nominal_confidence"])
    comparison = compare_grades(
        _first_looks(baseline, frames[0], look),
        _first_looks(candidate, frames[1], look),
        options=replace(
            options or CompareOptions(), confidence=nominal, min_effect=plan.min_effect
        ),
    )
    row = comparison.summary.iloc[0]
    # scores that leave out whole rules decide nothing, futility included
    estimate = math.nan if rules_left_out(dict(row)) else row["difference"]
    evidence = LookEvidence(
        comparison.verdict, estimate, row["se"], row["df"], bool(row["non_inferior"])
    )
    d = decide_look(plan, look, max_repeats, evidence)
    summary = comparison.summary.copy()
    summary["confidence"] = plan.confidence
    summary["reason"] = _reason(d, str(row["reason"]), look, max_repeats)
    extra = {
        "look": look,
        "looks_planned": max_repeats,
        "information_fraction": look / max_repeats,
        "alpha_spent": float(bound["alpha_spent"]),
        "nominal_confidence": nominal,
        "efficacy_z": float(bound["efficacy_z"]),
        "futility_z": d.futility_z,
        "z": d.z,
        "conditional_power": d.conditional_power,
        "sequential_method": plan.method,
        "stopped_for": d.stopped_for,
    }
    for key, value in extra.items():
        summary[key] = value
    warnings = comparison.warnings
    if d.stopped_for == "efficacy" and look < max_repeats:
        warnings = (
            *warnings,
            f"stopped early at look {look} of {max_repeats}: the point estimate is biased away "
            "from zero (it stopped because it was large); read the interval",
        )
    return replace(comparison, _summary=summary, warnings=warnings, stop=d.stop)


def _reason(d: LookDecision, reason: str, look: int, max_repeats: int) -> str:
    if d.stopped_for == "non-inferior":
        return (
            f"stopped at look {look} of {max_repeats}: the candidate is shown not worse than "
            f"the baseline by more than the minimum effect ({reason})"
        )
    if d.stopped_for == "futility":
        return (
            f"stopped for futility at look {look} of {max_repeats}: |z| = {abs(d.z):.2f} is "
            f"below the futility bound {d.futility_z:.2f}, so the planned effect is unlikely "
            f"to be shown (conditional power {d.conditional_power:.0%})"
        )
    if not d.stop:
        return f"go on: look {look} of {max_repeats} does not decide ({reason})"
    return reason
