"""The seeded split of a grid's cells into selection cells and held-out cells.

The held-out share is drawn from the cell ids and the seed alone (never from grades), so the
same grid and seed always hold out the same cells, whatever ran, in whatever order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["holdout_mask"]


def holdout_mask(cells: Sequence[str], holdout: float, seed: int) -> NDArray[np.bool_]:
    """True for the held-out cells: ``round(holdout * len(cells))`` of them, at least one on
    each side when there are two cells or more (``holdout`` in ``[0, 1)``; 0 holds out none).

    Cells are ranked by a keyed hash of ``(seed, cell_id)``, so the split does not depend on
    the order the cells come in.
    """
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be in [0, 1), got {holdout}")
    n = len(cells)
    k = round(holdout * n)
    if holdout > 0 and n >= 2:
        k = min(max(k, 1), n - 1)
    keys = [hashlib.sha256(f"{seed}\x00{cell}".encode()).hexdigest() for cell in cells]
    order = np.argsort(np.asarray(keys), kind="stable")
    mask = np.zeros(n, dtype=bool)
    mask[order[:k]] = True
    return mask
