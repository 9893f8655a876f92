"""The judge's verdicts as strata of labels: per rule (and run) and verdict, the judged pairs,
the labels drawn at random among them so far and how many of those pass, and the spread of the
truth behind the verdict that Neyman allocation and the label plan read.

A verdict's spread is ``sqrt(q~ (1 - q~))`` at the Jeffreys-smoothed label pass rate ``q~ =
(passed + 1/2) / (labelled + 1)``: never zero (a verdict whose few labels all agree with the
judge may still hide errors), 0.5 with no label (as uncertain as can be).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._correction import Matched
from ._grades import as_grades_frame

__all__ = ["STRATUM_KEYS", "pilot_rates", "spread", "verdict_strata"]

#: The columns that name a stratum of labels.
STRATUM_KEYS = ("run_id", "rule_id", "verdict")


def spread(passed: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """The Jeffreys-smoothed spread of the truth behind a verdict (module docstring)."""
    q = (np.asarray(passed, dtype=np.float64) + 0.5) / (np.asarray(labelled) + 1.0)
    return np.asarray(np.sqrt(q * (1.0 - q)))


def verdict_strata(frame: pd.DataFrame, labels: pd.DataFrame | None) -> pd.DataFrame:
    """Per judged rule and verdict (``pass``/``fail``) of one grades frame: ``judged``,
    ``labelled`` (usable labels with an inclusion probability) and ``passed`` (of those)."""
    matched = Matched.of(frame, labels)
    rows = []
    for rule in matched.rules():
        decided, yhat, y, _, _, _ = matched.arrays(matched.rows(rule))
        for verdict, value in (("fail", 0.0), ("pass", 1.0)):
            here = decided & (yhat == value)
            if not here.any():
                continue
            labelled = here & ~np.isnan(y)
            rows.append(
                {
                    "rule_id": rule,
                    "verdict": verdict,
                    "judged": int(here.sum()),
                    "labelled": int(labelled.sum()),
                    "passed": float(np.nansum(y[labelled])),
                }
            )
    columns = ["rule_id", "verdict", "judged", "labelled", "passed"]
    return pd.DataFrame(rows, columns=columns)


def pilot_rates(grades: object, labels: pd.DataFrame | None) -> pd.DataFrame:
    """A pilot run's per rule and verdict label counts (``labelled``, ``passed``), indexed
    by ``(rule_id, verdict)``."""
    strata = verdict_strata(as_grades_frame(grades), labels)  # type: ignore[arg-type]
    return strata.set_index(["rule_id", "verdict"])[["labelled", "passed"]]
