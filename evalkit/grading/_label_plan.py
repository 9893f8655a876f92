"""``plan_labels``: how many hand labels each judged rule still needs for a judge-corrected
interval of a given half-width.

The PPI++ variance splits into the judge's part and the labels' part (Angelopoulos, Duchi &
Zrnic 2023): ``var = lam^2 var(Yhat) / N + var(Y - lam Yhat) / n``. With ``n`` labels so far,
both parts are estimated from them (the weighted residual spread among the labelled pairs);
before there are :data:`MIN_LABELS` labels, the plan assumes labels alone (``lam = 0``,
``var(Y) = p (1 - p)`` at the judge's pass rate), which can only overstate the need.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..stats import ppi_pseudo_values
from ._correction import MIN_LABELS, Matched
from ._grades import GradesLike, as_grades_frame

__all__ = ["plan_labels"]


def _needed(
    yhat: np.ndarray, y: np.ndarray, weight: np.ndarray, target: float
) -> tuple[int, float]:
    """Labels needed (in total) for standard error ``target`` (unit scale), and the current
    half-width's standard error (NaN before :data:`MIN_LABELS` labels)."""
    total = len(yhat)
    labelled = ~np.isnan(y)
    n = int(labelled.sum())
    if n < MIN_LABELS:
        p = min(max(float(yhat.mean()), 0.05), 0.95)
        return min(total, math.ceil(p * (1 - p) / target**2)), math.nan
    psi, lam = ppi_pseudo_values(yhat, y, weight)
    judge_part = lam * lam * float(np.var(yhat, ddof=1)) / total
    w = weight[labelled]
    resid = y[labelled] - lam * yhat[labelled]
    centre = float((w * resid).sum() / w.sum())
    label_var = float((w * (resid - centre) ** 2).sum() / w.sum()) * n / max(n - 1, 1)
    current = math.sqrt(float(((psi - psi.mean()) ** 2).sum()) / (total * max(total - 1, 1)))
    room = target**2 - judge_part
    if room <= 0:
        return total, current
    return min(total, max(MIN_LABELS, math.ceil(label_var / room))), current


def plan_labels(
    grades: GradesLike,
    labels: pd.DataFrame | None = None,
    *,
    halfwidth: float,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per judged rule of ``grades``: labels used so far, the corrected interval's current
    half-width (points; NaN before 10 labels), the labels needed in total for a half-width of
    ``halfwidth`` points, and ``still_needed``. ``labels`` as for the comparison (conversation_id,
    rule_id, label, inclusion_probability); labels without a probability do not count."""
    if not halfwidth > 0:
        raise ValueError(f"halfwidth must be a positive number of points, got {halfwidth!r}")
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    matched = Matched.of(as_grades_frame(grades), labels)
    rows = []
    for rule in matched.rules():
        decided, yhat, y, weight, _, _ = matched.arrays(matched.rows(rule))
        if not decided.any():
            continue
        needed, se = _needed(yhat[decided], y[decided], weight[decided], halfwidth / 100 / z)
        used = int((~np.isnan(y)).sum())
        rows.append(
            {
                "rule_id": str(rule),
                "judged": int(decided.sum()),
                "labelled": used,
                "halfwidth": 100 * z * se,
                "needed": needed,
                "still_needed": max(needed - used, 0),
            }
        )
    columns = ["rule_id", "judged", "labelled", "halfwidth", "needed", "still_needed"]
    return pd.DataFrame(rows, columns=columns)
