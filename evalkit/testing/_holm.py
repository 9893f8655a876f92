"""Holm's step-down over a family of parts, through the parts' own intervals.

Holm (1979, "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.*
6:65-70) orders the ``m`` p-values and rejects the ``i``-th smallest while it is at most
``alpha / (m - i + 1)``. Said with intervals, that is Bonferroni repeated: read every part at
``1 - alpha / m``; the parts whose interval decides (excludes the null) are rejected; read the
rest at ``1 - alpha / (m - k)`` with ``k`` rejected so far, and go on until a step rejects
nothing. The family-wise error stays at most ``alpha``: the first true null rejected is
rejected at a level of at most ``alpha / m0`` (``m0`` true nulls), and the chance that any of
``m0`` tests at that level rejects is at most ``alpha`` (Holm's proof, which needs nothing of
the tests but their level). evalkit's intervals (bounded Wilson/MOVER limits, judge-error
bounds) have no p-value, so the steps read intervals; ``tests/testing/test_holm.py`` checks
that on p-values this is exactly statsmodels' ``multipletests(method="holm")``.

Vectorised: the last axis holds the parts, leading axes independent families (simulated
trials), and ``rejects(j)`` is asked once per divisor ``j`` any family needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["StepDown", "holm_step_down"]

BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class StepDown:
    """Where Holm's procedure left each part: ``rejected``, and the Bonferroni ``divisor`` its
    decision is read at (the step that rejected it, or the last step for the rest)."""

    rejected: BoolArray
    divisor: NDArray[np.int64]


def holm_step_down(m: int, rejects: Callable[[int], BoolArray]) -> StepDown:
    """Holm's procedure over ``m`` parts; ``rejects(j)`` says which parts (last axis) reject
    at the Bonferroni level ``alpha / j``, for ``j`` in ``1..m`` (module docstring)."""
    if m < 1:
        raise ValueError(f"a family needs at least one part, got {m}")
    seen: dict[int, BoolArray] = {}

    def at(j: int) -> BoolArray:
        if j not in seen:
            seen[j] = np.asarray(rejects(j), dtype=bool)
        return seen[j]

    first = at(m)
    rejected = np.zeros(first.shape, dtype=bool)
    divisor = np.full(first.shape, m, dtype=np.int64)
    while True:
        current = m - rejected.sum(axis=-1, keepdims=True)  # each family's divisor now
        new = np.zeros_like(rejected)
        for j in np.unique(current[current > 0]):
            here = np.broadcast_to(current == j, rejected.shape)
            new |= here & at(int(j)) & ~rejected
        if not new.any():
            break
        divisor = np.where(new, np.broadcast_to(current, rejected.shape), divisor)
        rejected |= new
    last = np.broadcast_to(m - rejected.sum(axis=-1, keepdims=True), rejected.shape)
    return StepDown(rejected=rejected, divisor=np.where(rejected, divisor, last))
