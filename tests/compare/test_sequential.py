"""Sequential comparisons: the plan, one look at a time, and calibration over all looks.

Rates come from ``calibrate_sequential``, whose array path is checked against
``compare_sequential`` trial by trial. Bounds are binomial for the trial count, not pinned
figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.compare import CompareOptions, SequentialPlan, Verdict, compare_sequential
from tests.simulate import Design, GradeGenerator, calibrate_sequential

DEMO = Design("demo grid, 18 cells x 6 repeats", repeats=6)
TRIALS = 1000


def _upper(p: float, n: int = TRIALS) -> float:
    return float(stats.binom.ppf(0.999, n, p) / n)


def test_plan_states_boundaries_and_costs_before_anything_runs() -> None:
    plan = SequentialPlan(6)
    frame = plan.boundaries(cells=18)
    assert list(frame["look"]) == [1, 2, 3, 4, 5, 6]
    assert frame["efficacy_z"].is_monotonic_decreasing
    assert frame["alpha_spent"].iloc[-1] == pytest.approx(0.05, abs=1e-6)
    assert (frame["nominal_confidence"] > 0.95).all()
    assert plan.maximum_conversations(18) == 216
    costs = [plan.expected_conversations(e, 18, sd=25) for e in (0, -10, -20)]
    assert all(c < 216 for c in costs)
    assert costs[2] < costs[1]


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("max_repeats", {"max_repeats": 0}),
        ("confidence", {"confidence": 1.5}),
        ("power", {"power": 1.0}),
        ("method", {"method": "bayes"}),
        ("spending", {"spending": "linear"}),
    ],
)
def test_bad_plans_name_the_field(field: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=field):
        SequentialPlan(**kwargs)  # type: ignore[arg-type]


def _pair(trial: int, effect: float, seed: int = 7):
    grades = GradeGenerator().draw(DEMO, trial + 1, seed, effect)
    return grades, grades.frame(trial, "baseline"), grades.frame(trial, "candidate")


def test_a_look_compares_the_first_repeats_and_says_so() -> None:
    _, base, cand = _pair(0, -20.0)
    plan = SequentialPlan(6)
    look = compare_sequential(base, cand, plan, look=2)
    row = look.summary.iloc[0]
    assert row["look"] == 2
    assert row["looks_planned"] == 6
    assert row["scored_baseline"] == 36  # 18 cells x 2 repeats
    assert row["nominal_confidence"] > 0.99
    assert row["confidence"] == 0.95
    assert 0 < row["alpha_spent"] < 0.05
    assert isinstance(look.stop, bool)
    last = compare_sequential(base, cand, plan)  # as many repeats as both sides have
    assert last.summary.iloc[0]["look"] == 6
    assert last.stop is True


def test_look_must_be_in_range_and_the_plan_owns_confidence() -> None:
    _, base, cand = _pair(0, 0.0)
    with pytest.raises(ValueError, match=r"look must be in 1\.\.6"):
        compare_sequential(base, cand, SequentialPlan(6), look=7)
    with pytest.raises(TypeError, match="unexpected keyword argument 'confidence'"):
        compare_sequential(base, cand, SequentialPlan(6), confidence=0.9)  # type: ignore[call-arg]
    plan = SequentialPlan(6, confidence=0.9, min_effect=3.0)
    own = compare_sequential(base, cand, plan, look=2)
    other = CompareOptions(confidence=0.6, min_effect=20.0, pass_k=1)
    given = compare_sequential(base, cand, plan, look=2, options=other)
    for column in ("confidence", "min_effect", "nominal_confidence", "difference_low"):
        assert given.summary.iloc[0][column] == own.summary.iloc[0][column]
    assert set(given.by_cell["k_baseline"]) == {1}  # the options' other knobs are read


def test_array_path_matches_compare_sequential_trial_by_trial() -> None:
    plan = SequentialPlan(6)
    grades = GradeGenerator().draw(DEMO, 12, 11, -10.0)
    from evalkit.compare._sequential import LookEvidence, decide_look
    from tests.simulate._calibration import _look_headline

    for look in (1, 3, 5):
        nominal = float(plan.nominal_confidence(6)[look - 1])
        h = _look_headline(grades, look, nominal, plan.min_effect)
        d = decide_look(plan, look, 6, LookEvidence.of(h))
        for trial in range(12):
            one = compare_sequential(
                grades.frame(trial, "baseline"), grades.frame(trial, "candidate"), plan, look=look
            )
            assert one.verdict == h.verdict[trial]
            assert one.stop == bool(d.stop[trial])
            assert one.summary.iloc[0]["stopped_for"] == d.stopped_for[trial]


def test_an_early_stop_says_its_estimate_is_biased_and_nothing_else_does() -> None:
    """Per trial, not for one seed: the warning comes exactly with an early efficacy stop."""
    plan = SequentialPlan(6)
    trials = 40
    worse = GradeGenerator().draw(DEMO, trials, 7, -40.0)
    same = GradeGenerator().draw(DEMO, trials, 8, 0.0)  # mostly goes on, or stops for futility
    stopped = 0
    for grades, effect in ((worse, -40.0), (same, 0.0)):
        for trial in range(trials):
            look = compare_sequential(
                grades.frame(trial, "baseline"), grades.frame(trial, "candidate"), plan, look=3
            )
            early = look.stop and look.summary.iloc[0]["stopped_for"] == "efficacy"
            assert any("biased" in w for w in look.warnings) == early
            if early and effect < 0:
                assert look.verdict is Verdict.REGRESSED  # the direction of the true effect
                stopped += 1
    # a 40-point regression: the plan's power at look 3 of 6 is near 1; the bound allows
    # for the trial count at a power of 0.9
    assert stopped >= stats.binom.ppf(0.001, trials, 0.9)
    last = compare_sequential(worse.frame(0, "baseline"), worse.frame(0, "candidate"), plan, look=6)
    assert not any("biased" in w for w in last.warnings)  # the last look is no early stop


def test_futility_stops_with_its_reason() -> None:
    plan = SequentialPlan(6)
    trials = 40
    grades = GradeGenerator().draw(DEMO, trials, 5, 0.0)
    futile = 0
    for trial in range(trials):
        look = compare_sequential(
            grades.frame(trial, "baseline"), grades.frame(trial, "candidate"), plan, look=5
        )
        row = look.summary.iloc[0]
        said = "stopped for futility" in str(row["reason"])
        assert said == (row["stopped_for"] == "futility")  # the reason says it, and only then
        if row["stopped_for"] == "futility":
            futile += 1
            assert look.stop
            assert look.verdict in (
                Verdict.INSUFFICIENT_EVIDENCE,
                Verdict.NO_DIFFERENCE,
            )
    # no difference: by look 5 of 6 most trials are futile (over all looks more than half
    # stop for futility, test_no_difference_stops_early_for_futility); a lower binomial
    # bound at a rate of 0.5 for this trial count
    assert futile >= stats.binom.ppf(0.001, trials, 0.5)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["group_sequential", "confidence_sequence"])
def test_aa_false_alarms_across_all_looks_within_nominal(method: str) -> None:
    r = calibrate_sequential(DEMO, SequentialPlan(6, method=method), 0.0, trials=TRIALS, seed=21)
    assert r["alarm"] <= _upper(0.05)
    assert r["coverage"] >= 0.95 - (_upper(0.05) - 0.05)


@pytest.mark.slow
@pytest.mark.parametrize("effect", [-10.0, -20.0])
def test_power_close_to_the_fixed_design_with_fewer_conversations(effect: float) -> None:
    r = calibrate_sequential(DEMO, SequentialPlan(6), effect, trials=TRIALS, seed=22)
    # the same trials: the sequential plan loses at most 3 points (plus binomial noise)
    assert r["power"] >= r["fixed_power"] - 0.03 - 2 * np.sqrt(0.25 / TRIALS)
    assert r["saved"] > (0.15 if effect == -10.0 else 0.45)


@pytest.mark.slow
def test_no_difference_stops_early_for_futility() -> None:
    r = calibrate_sequential(DEMO, SequentialPlan(6), 0.0, trials=TRIALS, seed=23)
    assert r["stopped_for"]["futility"] > 0.5
    assert r["saved"] > 0.18


def test_peeking_without_a_plan_inflates_alarms_and_the_plan_does_not() -> None:
    """Re-checking a fixed comparison after every repeat is what the plan replaces."""
    grades = GradeGenerator().draw(Design("8 repeats", repeats=8), 400, 31, 0.0)
    from tests.simulate._calibration import _look_headline

    naive = np.zeros(400, dtype=bool)
    for look in range(2, 9):
        h = _look_headline(grades, look, 0.95, 5.0)
        naive |= np.isin(h.verdict, [Verdict.IMPROVED, Verdict.REGRESSED])
    assert naive.mean() > 0.08  # well above 5%: why a plan is needed
    r = calibrate_sequential(
        Design("8 repeats", repeats=8), SequentialPlan(8), 0.0, trials=400, seed=31
    )
    assert r["alarm"] <= _upper(0.05, 400)


def test_repeats_are_recovered_without_a_repeat_column() -> None:
    _, base, cand = _pair(0, -20.0)
    a = compare_sequential(base, cand, SequentialPlan(6), look=2)
    b = compare_sequential(
        base.drop(columns="repeat"), cand.drop(columns="repeat"), SequentialPlan(6), look=2
    )
    pd.testing.assert_frame_equal(a.summary, b.summary)


@pytest.mark.slow
def test_stopping_when_non_inferior_claims_it_rarely_when_worse_and_often_when_not() -> None:
    plan = SequentialPlan(6, stop_when_non_inferior=True)
    worse = calibrate_sequential(DEMO, plan, -5.0, trials=TRIALS, seed=41)
    # a candidate as much worse as the margin (the hardest case of "inferior") is claimed
    # non-inferior at most half the plan's alpha (one side of the repeated interval)
    assert worse["stopped_for"]["non-inferior"] <= _upper(0.025)
    same = calibrate_sequential(DEMO, plan, 0.0, trials=TRIALS, seed=42)
    assert same["stopped_for"]["non-inferior"] > 0.1
    assert (
        same["saved"]
        > calibrate_sequential(DEMO, SequentialPlan(6), 0.0, trials=TRIALS, seed=42)["saved"]
    )
    assert same["alarm"] <= _upper(0.05)
