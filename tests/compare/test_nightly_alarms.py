"""Calibration of the nightly rule (``evalkit.compare.nightly_alarms``) on this test's own
generator: conversation scores = a cell's mean + a night effect shared by every conversation of
the night (between-night SD 0, 1.65 or 3.5 points) + Gaussian noise, clipped to 0-100, on the
demo's grid (18 cells x 3 repeats) and on 60 cells x 1 repeat. Unchanged nights must be flagged
``regressed`` no more often than 1% a night (binomial bound for the trial count), where the
within-night rule alone is not (the test of the bound can fail); a lasting 10-point drop must be
flagged within 2 nights and a 20-point drop on its first night (binomial lower bounds); the
rates seen are printed. ``benchmarks/bench_nightly.py`` has the full-size table."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import evalkit
from evalkit.compare import NIGHTLY_COLUMNS, NightlyAlarms, NightlyRule, nightly_alarms
from evalkit.compare._alarms import AlarmWatch, night_statistic
from evalkit.compare._between_nights import between_nights
from evalkit.compare._night_moments import Moments, paired
from evalkit.compare._nightly import night_scores

from ..result_face import assert_result_face, grades_frame

GRIDS = {"18x3": (18, 3), "60x1": (60, 1)}
NOISE = 20.0


class World:
    """One series: cell means, a grid, a between-night SD; nights drawn on demand."""

    def __init__(
        self, rng: np.random.Generator, grid: str, night_sd: float, clip: bool = True
    ) -> None:
        self.cells, self.repeats = GRIDS[grid]
        self.clip = clip
        self.rng = rng
        self.means = rng.uniform(55, 85, size=self.cells)
        self.night_sd = night_sd
        self.ids = np.repeat([f"c{c:02d}" for c in range(self.cells)], self.repeats)

    def night(self, drop: float = 0.0) -> pd.DataFrame:
        shift = self.rng.normal(0.0, self.night_sd) if self.night_sd else 0.0
        noise = self.rng.normal(0.0, NOISE, size=self.cells * self.repeats)
        score = np.repeat(self.means, self.repeats) + shift - drop + noise
        score = np.clip(score, 0, 100) if self.clip else score
        return pd.DataFrame({"cell_id": self.ids, "score": score})

    def moments(self, drop: float = 0.0) -> Moments:
        return Moments.of_frame(self.night(drop))


def _false_alarms(grid: str, sd: float, rule: NightlyRule, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    trials, nights = 40, 60
    flagged = 0
    for _ in range(trials):
        world, watch = World(rng, grid, sd), AlarmWatch(rule)
        flagged += sum(
            watch.observe_moments(f"n{i}", world.moments()).alarm == "regressed"
            for i in range(nights)
        )
    return flagged, trials * (nights - 1)


@pytest.mark.parametrize("grid", list(GRIDS))
@pytest.mark.parametrize("sd", [0.0, 3.5])
def test_unchanged_nights_stay_within_one_false_alarm_in_a_hundred(grid: str, sd: float) -> None:
    flagged, total = _false_alarms(grid, sd, NightlyRule(), seed=int(sd * 10) + len(grid))
    print(f"{grid}, between-night SD {sd}: regressed {flagged}/{total} unchanged nights")
    assert flagged <= binom.ppf(0.999, total, 0.01)


def test_the_within_night_rule_alone_pages_the_team_when_whole_nights_move() -> None:
    """The bound above can fail: without the between-night variance it does at SD 3.5."""
    alone = NightlyRule(between_nights=False)
    flagged, total = _false_alarms("18x3", 3.5, alone, seed=7)
    print(f"within-night error only, SD 3.5: regressed {flagged}/{total} unchanged nights")
    assert flagged > binom.ppf(0.999, total, 0.01)


@pytest.mark.parametrize(
    ("grid", "drop", "within", "floor"),
    [("18x3", 10.0, 2, 0.9), ("60x1", 10.0, 2, 0.9), ("18x3", 20.0, 1, 0.99)],
)
def test_a_lasting_drop_is_flagged_in_time(
    grid: str, drop: float, within: int, floor: float
) -> None:
    rng = np.random.default_rng(int(drop) + len(grid))
    trials, onset = 40, 40
    caught = 0
    for _ in range(trials):
        world, watch = World(rng, grid, 1.65), AlarmWatch()
        hits = [
            watch.observe_moments(f"n{i}", world.moments(drop if i >= onset else 0.0)).alarm
            == "regressed"
            for i in range(onset + within)
        ]
        caught += any(hits[onset:])
    print(f"{grid}: {drop:.0f}-point drop flagged within {within} night(s): {caught}/{trials}")
    assert caught >= binom.ppf(0.001, trials, floor)


def test_the_between_night_variance_is_recovered_and_a_step_is_left_out() -> None:
    rng = np.random.default_rng(11)
    for grid in GRIDS:
        estimates = []
        for _ in range(60):
            world = World(rng, grid, 3.5, clip=False)  # clipping would shrink the night effect
            nights = [world.moments() for _ in range(40)]
            steps = [paired(a, b) for a, b in itertools.pairwise(nights)]
            found = between_nights([s for s in steps if s is not None])
            assert found is not None
            estimates.append(found.tau2)
        mean = float(np.mean(estimates))
        print(f"{grid}: mean tau2 {mean:.1f} (true {3.5**2})")
        assert 3.5**2 * 0.8 < mean < 3.5**2 * 1.2
    world = World(rng, "18x3", 0.0)
    nights = [world.moments() for _ in range(20)] + [world.moments(40.0) for _ in range(20)]
    steps = [paired(a, b) for a, b in itertools.pairwise(nights)]
    found = between_nights([s for s in steps if s is not None])
    assert found is not None
    assert found.left_out == 1  # the 40-point step; kept, it would add about 20 to tau2
    assert found.tau2 < 8.0


def test_a_short_series_falls_back_to_the_within_night_error_and_says_so() -> None:
    world = World(np.random.default_rng(3), "18x3", 0.0)
    result = nightly_alarms([world.night() for _ in range(6)])
    nights = result.nights
    assert nights["variance"].iloc[3] == (
        "within night only (short series: 3 nights before it, the between-night variance needs 4)"
    )
    assert nights["variance_nights"].iloc[3] == 0
    assert math.isnan(nights["between_sd"].iloc[3])
    assert nights["variance"].iloc[4].startswith("within night + between nights (SD ")
    assert nights["variance"].iloc[-1].startswith("within night + between nights (SD ")
    assert nights["variance_nights"].iloc[-1] == 5
    assert nights["se"].iloc[-1] >= nights["within_se"].iloc[-1]
    off = nightly_alarms(
        [world.night() for _ in range(6)], options=NightlyRule(between_nights=False)
    )
    assert set(off.nights["variance"].iloc[1:]) == {
        "within night only (between-night variance off)"
    }


def test_two_low_nights_confirm_a_change_that_began_on_the_first() -> None:
    """The first night of a drop, not flagged alone, is not last-known-good once the second
    confirms it: the regressed night is compared with (and `what_changed` diffs against) the
    night before the change."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        world = World(rng, "18x3", 0.0)
        nights = {f"n{i:02d}": world.night(12.0 if i >= 30 else 0.0) for i in range(32)}
        frame = nightly_alarms(nights).nights.set_index("night")
        second = frame.loc["n31", "why"]
        if frame.loc["n30", "alarm"] is None and second.startswith("two low nights together"):
            break
    else:
        pytest.fail("no series where only the second night of the drop was flagged, by two nights")
    assert frame.loc["n31", "alarm"] == "regressed"
    assert not frame.loc["n30", "good"]
    assert frame.loc["n31", "last_good"] == frame.loc["n30", "last_good"] != "n30"


def test_nightly_alarms_reads_grades_and_score_tables_alike_and_has_the_result_face() -> None:
    grades = [grades_frame(12, 3 + (i % 2), f"g{i}-") for i in range(5)]
    from_grades = nightly_alarms({f"night-{i}": g for i, g in enumerate(grades)})
    scores = [night_scores(g) for g in grades]  # the table history reads
    from_scores = nightly_alarms({f"night-{i}": s for i, s in enumerate(scores)})
    pd.testing.assert_frame_equal(from_grades.nights, from_scores.nights)
    assert isinstance(from_grades, NightlyAlarms)
    assert list(from_grades.nights.columns) == list(NIGHTLY_COLUMNS)
    assert list(from_grades.nights["night"]) == [f"night-{i}" for i in range(5)]
    assert_result_face(from_grades)
    assert from_grades.headline().startswith("night-4: ")
    assert json.loads(json.dumps(from_grades.to_dict()))["rule"]["pair_z"] == 2.58
    unnamed = nightly_alarms(scores)
    assert list(unnamed.nights["night"]) == [f"night {i}" for i in range(1, 6)]
    assert evalkit.nightly_alarms is nightly_alarms
    assert nightly_alarms([]).headline() == "No nights to judge."


def test_nightly_alarms_refuses_what_is_not_nights_naming_it() -> None:
    scores = pd.DataFrame({"cell_id": ["a"], "score": [50.0]})
    with pytest.raises(TypeError, match="a mapping name -> table or a sequence of tables"):
        nightly_alarms(scores)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs columns"):
        nightly_alarms([pd.DataFrame({"score": [1.0]})])


def test_the_statistic_is_paired_by_cell_and_says_its_method() -> None:
    world = World(np.random.default_rng(0), "18x3", 0.0)
    ref, night = world.night(), world.night(10.0)
    stat = night_statistic(ref, night)
    assert stat is not None
    assert stat.method == "within-cell variance"
    assert stat.cells == 18
    assert -20 < stat.difference < 0
    one = night.groupby("cell_id", as_index=False)["score"].mean()  # one repeat per cell
    assert night_statistic(ref, one).method == "paired t over cells"  # type: ignore[union-attr]
    assert night_statistic(ref, night.assign(cell_id="elsewhere")) is None


def test_rule_knobs_are_checked_naming_the_field() -> None:
    with pytest.raises(ValueError, match="suspect_z <= single_z"):
        NightlyRule(suspect_z=3.5, single_z=3.0)
    with pytest.raises(ValueError, match="pair_z <= single_z"):
        NightlyRule(pair_z=3.5, single_z=3.0)
    with pytest.raises(ValueError, match=r"NightlyRule\.window must be >= 1"):
        NightlyRule(window=0)
    with pytest.raises(ValueError, match=r"NightlyRule\.floor must be >= 0"):
        NightlyRule(floor=-1)
    with pytest.raises(ValueError, match=r"NightlyRule\.min_nights must be >= 3"):
        NightlyRule(min_nights=2)
    with pytest.raises(ValueError, match=r"NightlyRule\.variance_window must be >= min_nights"):
        NightlyRule(min_nights=10, variance_window=5)
