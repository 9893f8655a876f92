"""The one score formula: a conversation's awarded points over its applicable points x 100.

Everything that scores a conversation (``Grades.scores``, the comparison's arrays, the report's
plots, the synthetic grades of the calibration) calls :func:`score_from_points`;
``tests/test_one_score.py`` fails when a second formula appears.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = ["conversation_points", "score_from_points"]

_COLUMNS = ("conversation_id", "points", "points_awarded", "verdict")


def score_from_points(awarded: ArrayLike, applicable: ArrayLike) -> NDArray[np.float64]:
    """``100 * awarded / applicable``, NaN where no point was applicable (vectorised)."""
    got = np.asarray(awarded, dtype=np.float64)
    possible = np.asarray(applicable, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(possible > 0, 100.0 * got / possible, np.nan))


def conversation_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Per conversation id (first-seen order): ``awarded`` and ``applicable`` points (rules
    graded ``pass`` or ``fail``; ``na`` and ``error`` are not applicable) and ``score``."""
    missing = [c for c in _COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"grades lack columns {missing}")
    applicable = frame["verdict"].isin(["pass", "fail"]).to_numpy()
    points = pd.DataFrame(
        {
            "conversation_id": frame["conversation_id"].astype(str).to_numpy(),
            "awarded": np.where(applicable, frame["points_awarded"].fillna(0.0), 0.0),
            "applicable": np.where(applicable, frame["points"].astype("float64"), 0.0),
        }
    )
    sums = points.groupby("conversation_id", sort=False)[["awarded", "applicable"]].sum()
    sums["score"] = score_from_points(sums["awarded"], sums["applicable"])
    return sums
