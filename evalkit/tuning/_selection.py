"""Selection-aware statistics for many arms against one control (pure arrays).

The winner's claim is a two-stage adaptive test with treatment selection (an "adaptive
seamless" design): stage 1 is the **selection cells**, where the arm to confirm is chosen (the
best estimate among the arms still in); stage 2 is the **held-out cells**, never looked at for
selection, dropping or choosing. The selected arm ``j`` is called ``improved`` only when the
closed test rejects every intersection hypothesis ``H_S`` (``S`` a set of arms holding ``j``),
each by the inverse-normal combination of

* stage 1: the Bonferroni p-value of ``H_S`` on the selection cells, ``|S| min_{i in S} p_i``
  (an arm dropped by the adaptive allocation enters with ``p = 1``: its p-value after a
  data-dependent stop is not used, which only makes rejection harder);
* stage 2: the selected arm's p-value on the held-out cells (the only arm of ``S`` that goes on),

``z = w1 Phi^-1(1 - p1) + w2 Phi^-1(1 - p2) >= Phi^-1(1 - alpha)`` with weights fixed by the
design (``w1^2``, ``w2^2`` the shares of selection and held-out cells). This controls the
family-wise error of the ``improved`` claim in the strong sense whatever the selection rule
(Bauer & Kohne 1994, Biometrics 50:1029; Bretz, Schmidli, Konig, Racine & Maurer 2006,
Biometrical Journal 48:623, "Confirmatory seamless phase II/III clinical trials with hypotheses
selection at interim"; Posch et al. 2005, Stat Med 24:3697). ``confirmed`` also asks the
held-out difference alone to point the right way (a further condition, so the error stays
controlled). ``alpha`` is one-sided at ``(1 - confidence) / 2``, so ``improved`` means what a
two-sided interval above zero means in :func:`evalkit.compare_grades`.

Each stage's p-value is the one-sided t test of the paired grid difference (arm minus control)
of :func:`evalkit.stats.paired_grid` (repeats reduced within cells first, the variance from
the repeats or from the cells). Where judge errors differ between an arm and the control
(Fisher's test, as in ``compare_grades``), the p-value is the larger of the estimate's and the
pessimistic case's (the arm's errors failed, the control's passed).

All functions broadcast over leading axes (simulated trials): control arrays are ``(..., C)``,
arm arrays ``(..., K, C)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ..compare import Scenarios, check_confidence
from ..stats import CellMoments, PairedGrid, VarianceMethod, paired_grid

__all__ = [
    "ArmsData",
    "Selection",
    "closed_bonferroni",
    "combine",
    "one_sided_p",
    "select_and_confirm",
]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
_TINY = 1e-15


@dataclass(frozen=True)
class ArmsData:
    """The control's and the arms' per-cell moments (three error scenarios each), and where
    an arm's judge errors differ from the control's (``bounded``, ``(..., K)``)."""

    control: Scenarios  # (..., C)
    arms: Scenarios  # (..., K, C)
    bounded: Any  # bool array (..., K)

    @property
    def n_arms(self) -> int:
        return int(np.shape(self.arms.left_out.n)[-2])


def _expand(m: CellMoments) -> CellMoments:
    return CellMoments(m.n[..., None, :], m.mean[..., None, :], m.var[..., None, :])


def _grid(control: CellMoments, arms: CellMoments, keep: BoolArray) -> PairedGrid:
    return paired_grid(_expand(control.mask(keep)), arms.mask(keep))


def one_sided_p(grid: PairedGrid) -> FloatArray:
    """P-value of "the arm is not better than the control" (one-sided t; 1 with no interval)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = grid.estimate / np.sqrt(grid.variance)
        p = stats.t.sf(t, grid.df)
    none = (grid.method == VarianceMethod.NONE) | np.isnan(p)
    return np.asarray(np.where(none, 1.0, p), dtype=np.float64)


def _p_values(data: ArmsData, keep: BoolArray) -> tuple[FloatArray, PairedGrid]:
    main = _grid(data.control.left_out, data.arms.left_out, keep)
    worst = _grid(data.control.as_pass, data.arms.as_fail, keep)
    p_main, p_worst = one_sided_p(main), one_sided_p(worst)
    return np.where(np.asarray(data.bounded, dtype=bool), np.fmax(p_main, p_worst), p_main), main


def closed_bonferroni(p: FloatArray, selected: NDArray[np.int64]) -> FloatArray:
    """The largest Bonferroni p-value ``|S| min_{i in S} p_i`` over the sets ``S`` of arms that
    hold the selected arm (capped at 1): the stage-1 p-value the closed test must beat.

    For a set of size ``s`` the largest value takes the ``s - 1`` other arms with the largest
    p-values, so one sort gives every size at once.
    """
    k = p.shape[-1]
    p_sel = np.take_along_axis(p, selected[..., None], axis=-1)[..., 0]
    others = np.where(np.arange(k) == selected[..., None], -np.inf, p)
    desc = -np.sort(-others, axis=-1)[..., : k - 1]  # the other arms, largest p first
    sizes = np.arange(2, k + 1, dtype=np.float64)
    values = sizes * np.minimum(p_sel[..., None], desc)
    worst = np.max(values, axis=-1, initial=0.0) if k > 1 else np.zeros_like(p_sel)
    return np.asarray(np.minimum(1.0, np.maximum(p_sel, worst)), dtype=np.float64)


def combine(p1: FloatArray, p2: FloatArray, w1: float, w2: float) -> FloatArray:
    """Inverse-normal combination of two independent stage p-values (weights normalised)."""
    norm = np.hypot(w1, w2)
    z = (
        w1 * stats.norm.isf(np.clip(p1, _TINY, 1 - _TINY))
        + w2 * stats.norm.isf(np.clip(p2, _TINY, 1 - _TINY))
    ) / norm
    return np.asarray(stats.norm.sf(z), dtype=np.float64)


@dataclass(frozen=True)
class Selection:
    """Every arm's stage p-values, the selected arm and whether its win is confirmed."""

    selection_p: FloatArray  # (..., K) one-sided, selection cells
    selection_estimate: FloatArray  # (..., K) points
    selected: NDArray[np.int64]  # (...,) index of the arm chosen on the selection cells, -1: none
    closed_p: FloatArray  # (...,) stage-1 p of the closed test for the selected arm
    holdout_p: FloatArray  # (...,) the selected arm's one-sided p on the held-out cells
    holdout_estimate: FloatArray  # (...,) its held-out difference (points)
    holdout_se: FloatArray  # (...,) its standard error (points)
    holdout_df: FloatArray  # (...,) its degrees of freedom
    combined_p: FloatArray  # (...,) the combination test's p-value
    confirmed: BoolArray  # (...,)
    alpha: float
    weights: tuple[float, float] = (1.0, 0.0)  # the combination's (selection, held-out) weights


def select_and_confirm(
    data: ArmsData,
    holdout: BoolArray,
    *,
    confidence: float = 0.95,
    active: Any = True,
) -> Selection:
    """Choose the best active arm on the selection cells and test it (module docstring).

    ``holdout``: the held-out cells ``(C,)``. ``active`` (bool, ``(..., K)``): arms still in at
    the end (a dropped arm is never selected and enters the closed test with ``p = 1``).
    """
    check_confidence(confidence, "select_and_confirm")
    alpha = (1.0 - confidence) / 2.0
    hold = np.asarray(holdout, dtype=bool)
    p1, grid1 = _p_values(data, ~hold)
    est1 = np.asarray(grid1.estimate, dtype=np.float64)
    live = np.broadcast_to(np.asarray(active, dtype=bool), p1.shape) & ~np.isnan(est1)
    ranked = np.where(live, est1, -np.inf)
    selected = np.argmax(ranked, axis=-1).astype(np.int64)
    any_live = live.any(axis=-1)
    p1_closed = closed_bonferroni(np.where(live, p1, 1.0), selected)
    p2_all, grid2 = _p_values(data, hold)
    take = selected[..., None]
    p2 = np.take_along_axis(p2_all, take, axis=-1)[..., 0]
    est2 = np.take_along_axis(np.asarray(grid2.estimate, dtype=np.float64), take, axis=-1)[..., 0]
    se2 = np.take_along_axis(np.sqrt(np.asarray(grid2.variance, dtype=np.float64)), take, axis=-1)
    df2 = np.take_along_axis(
        np.broadcast_to(np.asarray(grid2.df, dtype=np.float64), p2_all.shape), take, axis=-1
    )
    se2, df2 = se2[..., 0], df2[..., 0]
    n_sel, n_hold = float((~hold).sum()), float(hold.sum())
    if n_hold == 0:  # no held-out cells: the closed test on the selection cells alone
        combined = p1_closed
        est2 = np.full(np.shape(p1_closed), np.nan)
        p2 = np.full(np.shape(p1_closed), np.nan)
        se2 = np.full(np.shape(p1_closed), np.nan)
        df2 = np.full(np.shape(p1_closed), np.nan)
        direction = np.ones(np.shape(p1_closed), dtype=bool)
    else:
        combined = combine(p1_closed, p2, np.sqrt(n_sel), np.sqrt(n_hold))
        direction = np.nan_to_num(est2, nan=-1.0) > 0
    confirmed = any_live & (combined <= alpha) & direction
    return Selection(
        selection_p=p1,
        selection_estimate=est1,
        selected=np.where(any_live, selected, -1).astype(np.int64),
        closed_p=p1_closed,
        holdout_p=p2,
        holdout_estimate=est2,
        holdout_se=np.asarray(se2, dtype=np.float64),
        holdout_df=np.asarray(df2, dtype=np.float64),
        combined_p=combined,
        confirmed=np.asarray(confirmed, dtype=bool),
        alpha=alpha,
        weights=(float(np.sqrt(n_sel)), float(np.sqrt(n_hold))),
    )
