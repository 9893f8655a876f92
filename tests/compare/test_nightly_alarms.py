"""Calibration of the nightly confirmation rule (``evalkit.compare._alarms``) on this test's own
generator: conversation scores = a cell's mean + Gaussian noise, clipped to 0-100, on the
demo's grid (18 cells x 3 repeats). Unchanged nights must be flagged ``regressed`` no more
often than the rule's nominal 1% per night (binomial bound for the trial count); a lasting
10-point drop must be flagged within 2 nights and a 20-point drop on its first night in at
least 90% of trials (binomial lower bound); the power seen is printed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from evalkit.compare import NightlyRule
from evalkit.compare._alarms import AlarmWatch, night_statistic

CELLS, REPEATS = 18, 3
IDS = np.repeat([f"c{c:02d}" for c in range(CELLS)], REPEATS)


def _night(rng: np.random.Generator, means: np.ndarray, drop: float = 0.0) -> pd.DataFrame:
    noise = rng.normal(0.0, 20.0, size=CELLS * REPEATS)
    score = np.clip(np.repeat(means, REPEATS) - drop + noise, 0, 100)
    return pd.DataFrame({"cell_id": IDS, "score": score})


def _means(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(55, 85, size=CELLS)


def test_unchanged_nights_stay_within_the_rules_false_alarm_rate() -> None:
    rng = np.random.default_rng(2026)
    trials, nights = 30, 40
    flagged = suspect = 0
    for _ in range(trials):
        means = _means(rng)
        watch = AlarmWatch()
        for night in range(nights):
            _, alarm = watch.observe(f"n{night}", _night(rng, means))
            flagged += alarm == "regressed"
            suspect += alarm == "suspect"
    total = trials * (nights - 1)
    print(f"regressed {flagged}/{total} nights, suspect {suspect}/{total}")
    assert flagged <= binom.ppf(0.999, total, 0.01)
    assert suspect > 0  # the first stage does fire on noise: the confirmation is what holds


@pytest.mark.parametrize(("drop", "within", "floor"), [(10.0, 2, 0.9), (20.0, 1, 0.9)])
def test_a_lasting_drop_is_flagged_in_time(drop: float, within: int, floor: float) -> None:
    rng = np.random.default_rng(int(drop))
    trials, onset = 40, 5
    caught = 0
    for _ in range(trials):
        means = _means(rng)
        watch = AlarmWatch()
        hits = []
        for night in range(onset + within):
            scores = _night(rng, means, drop if night >= onset else 0.0)
            _, alarm = watch.observe(f"n{night}", scores)
            hits.append(alarm == "regressed")
        caught += any(hits[onset:])
    print(f"{drop:.0f}-point drop flagged within {within} night(s): {caught}/{trials}")
    assert caught >= binom.ppf(0.001, trials, floor)


def test_the_statistic_is_paired_by_cell_and_says_its_method() -> None:
    rng = np.random.default_rng(0)
    means = _means(rng)
    ref, night = _night(rng, means), _night(rng, means, 10.0)
    stat = night_statistic(ref, night)
    assert stat is not None
    assert stat.method == "within-cell variance"
    assert stat.cells == CELLS
    assert -20 < stat.difference < 0
    one = night.groupby("cell_id", as_index=False)["score"].mean()  # one repeat per cell
    assert night_statistic(ref, one).method == "paired t over cells"  # type: ignore[union-attr]
    assert night_statistic(ref, night.assign(cell_id="elsewhere")) is None


def test_rule_knobs_are_checked_naming_the_field() -> None:
    with pytest.raises(ValueError, match="suspect_z <= single_z"):
        NightlyRule(suspect_z=3.5, single_z=3.0)
    with pytest.raises(ValueError, match=r"NightlyRule\.window must be >= 1"):
        NightlyRule(window=0)
    with pytest.raises(ValueError, match=r"NightlyRule\.floor must be >= 0"):
        NightlyRule(floor=-1)
