"""``plan_labels``: how many hand labels each judged rule still needs for a judge-corrected
interval of a given half-width.

The corrected pass rate is stratified by the judge's verdict (:mod:`evalkit.stats._ppi`), so
its variance is the judge's part plus each verdict's labels' part (Cochran 1977, ch. 5):
``var = sum_h W_h (q_h - theta)^2 / N + sum_h W_h^2 S_h^2 / n_h``, with ``W_h`` the verdict's
share of the rule's judged pairs, ``q_h`` the label pass rate behind it and ``S_h`` its spread
(:func:`._label_strata.spread`). Labels spread over the verdicts as the queue will spread
them: in proportion to ``W_h`` (``var = V_J + sum W S^2 / n``) or by Neyman allocation
(``var = V_J + (sum W S)^2 / n``, never more). The plan solves for ``n`` at the interval's
Student's t quantile. The rates come from the labels so far (once the rule has
:data:`MIN_LABELS`), or from a pilot run; before either, the plan assumes labels alone
(``q (1 - q)`` at the judge's pass rate, clipped to [0.05, 0.95]), which can only overstate
the need.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ._correction import MIN_LABELS, Matched, corrected_mean
from ._grades import GradesLike, as_grades_frame
from ._label_options import LabelOptions
from ._label_strata import pilot_rates, spread

__all__ = ["pilot_table", "plan_labels"]

PLAN_COLUMNS = ["rule_id", "judged", "labelled", "halfwidth", "needed", "still_needed"]


def pilot_table(options: LabelOptions) -> pd.DataFrame | None:
    """The pilot's per rule and verdict label counts, or None without a pilot."""
    from ..store import Run

    pilot = options.pilot
    if pilot is None:
        return None
    if isinstance(pilot, Run):
        return pilot_rates(pilot.grades(options.rubric_version_id), pilot.labels())
    return pilot_rates(pilot[0], pilot[1])


def _needed(
    share: np.ndarray, rate: np.ndarray, spreads: np.ndarray, judged: int, target: float,
    options: LabelOptions,
) -> int:  # fmt: skip
    """The fewest labels (in total, at least :data:`MIN_LABELS`) whose interval, at the t
    quantile of their degrees of freedom, is ``target`` wide (unit scale) or less, given each
    verdict's share, label pass rate and spread; every judged pair when none is."""
    theta = float((share * rate).sum())
    judge_part = float((share * (rate - theta) ** 2).sum()) / judged
    if options.allocation == "neyman":
        label_part = float((share * spreads).sum()) ** 2
    else:
        label_part = float((share * spreads**2).sum())
    n = np.arange(min(MIN_LABELS, judged), judged + 1, dtype=np.float64)
    dof = np.maximum(n - len(share), 1.0)
    half = stats.t.ppf(0.5 + options.confidence / 2, dof) * np.sqrt(judge_part + label_part / n)
    enough = np.flatnonzero(half <= target)
    return int(n[enough[0]]) if len(enough) else judged


def plan_labels(
    grades: GradesLike,
    labels: pd.DataFrame | None = None,
    *,
    options: LabelOptions | None = None,
) -> pd.DataFrame:
    """Per judged rule of ``grades``: labels used so far, the corrected interval's current
    half-width (points; NaN before 10 labels), the labels needed in total for a half-width of
    ``options.halfwidth`` points when they are spread by ``options.allocation``, and
    ``still_needed``. ``labels`` as for the comparison (conversation_id, rule_id, label,
    inclusion_probability); labels without a probability do not count. Reads ``halfwidth``,
    ``confidence``, ``allocation``, ``rules`` and ``pilot`` of :class:`LabelOptions`."""
    opts = options or LabelOptions()
    target = opts.halfwidth / 100.0
    matched = Matched.of(as_grades_frame(grades), labels)
    pilot = pilot_table(opts)
    rows = []
    for rule in matched.rules():
        if opts.rules is not None and rule not in opts.rules:
            continue
        decided, yhat, y, weight, _, _ = matched.arrays(matched.rows(rule))
        if not decided.any():
            continue
        yhat, y, weight = yhat[decided], y[decided], weight[decided]
        labelled = ~np.isnan(y)
        used = int(labelled.sum())
        verdicts = np.unique(yhat)
        share = np.array([(yhat == v).mean() for v in verdicts])
        if pilot is not None:
            names = ["pass" if v == 1 else "fail" for v in verdicts]
            known = pilot.reindex([(rule, name) for name in names]).fillna(0.0)
            k, x = known["labelled"].to_numpy(), known["passed"].to_numpy()
        else:
            k = np.array([(labelled & (yhat == v)).sum() for v in verdicts], dtype=np.float64)
            x = np.array([np.nansum(y[labelled & (yhat == v)]) for v in verdicts])
        halfwidth = math.nan
        if used >= MIN_LABELS:
            est = corrected_mean(yhat, y, weight, confidence=opts.confidence)
            halfwidth = 100.0 * (est.high - est.low) / 2.0
        if pilot is None and used < MIN_LABELS:
            p = min(max(float(yhat.mean()), 0.05), 0.95)  # labels alone
            rate, spreads = np.array([p]), np.array([math.sqrt(p * (1 - p))])
            needed = _needed(np.array([1.0]), rate, spreads, len(yhat), target, opts)
        else:
            rate = (x + 0.5) / (k + 1.0)
            needed = _needed(share, rate, spread(x, k), len(yhat), target, opts)
        rows.append(
            {
                "rule_id": str(rule),
                "judged": int(decided.sum()),
                "labelled": used,
                "halfwidth": halfwidth,
                "needed": needed,
                "still_needed": max(needed - used, 0),
            }
        )
    return pd.DataFrame(rows, columns=PLAN_COLUMNS)
