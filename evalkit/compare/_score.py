"""The one score formula: a conversation's awarded points over its applicable points x 100."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["score_from_points"]


def score_from_points(awarded: ArrayLike, applicable: ArrayLike) -> NDArray[np.float64]:
    """``100 * awarded / applicable``, NaN where no point was applicable (vectorised)."""
    got = np.asarray(awarded, dtype=np.float64)
    possible = np.asarray(applicable, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(possible > 0, 100.0 * got / possible, np.nan))
