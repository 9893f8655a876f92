"""Adaptive allocation: waves of one repeat per cell, and arms dropped when clearly worse.

After each wave but the last, an arm still in is dropped when, on the **selection cells**
only (held-out cells never steer the sweep), its one-sided upper confidence bound for
"arm minus the current best" or for "arm minus the control" is below zero. The current best
is the arm still in with the highest estimate against the control. Each bound is at level
``drop_alpha / (arms x (waves - 1))``: Bonferroni over the arms and the planned looks, so the
chance that the truly best arm is ever dropped stays below ``drop_alpha`` (conservative; the
dropping rule only costs power, never error: a dropped arm cannot be selected and enters the
final closed test with ``p = 1``, see :mod:`._selection`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..stats import CellMoments, paired_grid
from ._selection import ArmsData

__all__ = ["drop_bound_confidence", "wave_drops"]

BoolArray = NDArray[np.bool_]


def drop_bound_confidence(arms: int, waves: int, drop_alpha: float = 0.05) -> float:
    """The two-sided confidence whose upper limit is the one-sided bound a drop reads."""
    if not 0.0 < drop_alpha < 1.0:
        raise ValueError(f"drop_alpha must be in (0, 1), got {drop_alpha}")
    looks = max(waves - 1, 1)
    return 1.0 - 2.0 * drop_alpha / (max(arms, 1) * looks)


def _take(m: CellMoments, index: NDArray[np.int64]) -> CellMoments:
    """Arm ``index`` (per leading position) of arms moments ``(..., K, C)``, kept as ``(..., 1, C)``."""
    i = index[..., None, None]
    return CellMoments(
        *(
            np.take_along_axis(a, np.broadcast_to(i, (*a.shape[:-2], 1, a.shape[-1])), axis=-2)
            for a in (m.n, m.mean, m.var)
        )
    )


def wave_drops(
    data: ArmsData, holdout: BoolArray, active: BoolArray, *, confidence: float
) -> BoolArray:
    """Which active arms to drop now (module docstring); ``active`` is ``(..., K)``."""
    keep = ~np.asarray(holdout, dtype=bool)
    control = data.control.left_out.mask(keep)
    arms = data.arms.left_out.mask(keep)
    control_k = CellMoments(
        control.n[..., None, :], control.mean[..., None, :], control.var[..., None, :]
    )
    vs_control = paired_grid(control_k, arms).interval(confidence)
    estimate = np.where(
        active, np.nan_to_num(np.asarray(vs_control.estimate), nan=-np.inf), -np.inf
    )
    best = np.argmax(estimate, axis=-1).astype(np.int64)
    vs_best = paired_grid(_take(arms, best), arms).interval(confidence)
    with np.errstate(invalid="ignore"):
        worse = (np.asarray(vs_control.high) < 0) | (np.asarray(vs_best.high) < 0)
    return np.asarray(active & worse, dtype=bool)
