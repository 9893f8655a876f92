"""plan_repeats: the planned grid size achieves roughly the requested power in simulation."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.compare import RepeatPlanOptions, Verdict, plan_repeats
from evalkit.compare._decision import Scenarios, decide_grid, errors_differ, scenario_scores
from evalkit.stats import CellMoments
from tests.simulate import SyntheticTruth, synthetic_grades


def _power(truth: SyntheticTruth, effect: float, repeats: int, seed: int) -> float:
    """Power of a paired comparison whose sides sit effect/2 either side of ``truth``.

    Scores are bounded, so their noise depends on their level; the plan assumes both sides
    are as noisy as the pilot, which holds on average when the pilot sits between them. The
    decision is compare_grades' own (evalkit.compare.calibrate's array path).
    """
    base, cand = truth.shifted(effect / 2), truth.shifted(-effect / 2)
    points = np.asarray(truth.points)

    def scenarios(codes: np.ndarray) -> Scenarios:
        return Scenarios(*(CellMoments.from_values(x) for x in scenario_scores(codes, points)))

    def with_errors(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.full(codes.shape[0], codes.shape[1] * codes.shape[2])
        return (codes == 3).any(axis=-1).sum(axis=(-1, -2)), n

    a, b = base.simulate(2000, repeats, seed), cand.simulate(2000, repeats, seed + 1)
    d = decide_grid(
        scenarios(a), scenarios(b), bounded=errors_differ(with_errors(a), with_errors(b))
    )
    return float((np.asarray(d.verdict) == Verdict.REGRESSED).mean())


@pytest.mark.slow
@pytest.mark.parametrize("effect", [6.0, 10.0])
def test_planned_repeats_keep_the_promise_on_average_over_pilots(effect: float) -> None:
    """The issue's acceptance: >= 88% when 90% is asked, averaged over pilots (18 x 3 each)."""
    truth = SyntheticTruth.demo(seed=2)
    plans = [
        plan_repeats(
            synthetic_grades(truth, repeats=3, seed=1000 + i),
            options=RepeatPlanOptions(effect=effect, power=0.9),
        )
        for i in range(60)
    ]
    assert all(p.repeats_per_cell is not None for p in plans)
    planned = [int(p.repeats_per_cell or 0) for p in plans]
    power = {r: _power(truth, effect, r, seed=70 + r) for r in sorted(set(planned))}
    average = float(np.mean([power[r] for r in planned]))
    # Measured over 100 pilots: 0.894 (6 points), 0.910 (10 points); the old plan (pilot sd as
    # if known, df = 2C(R-1) against Welch df) gave 0.85. Whole repeats overshoot a little.
    assert average >= 0.88
    assert average <= 0.97  # and does not buy far more than asked
    assert all(0.5 < p.expected_power < 1.0 for p in plans)


def test_plan_fields_and_text() -> None:
    pilot = synthetic_grades(SyntheticTruth.demo(seed=1), repeats=3, seed=2)
    plan = plan_repeats(pilot, options=RepeatPlanOptions(effect=10.0))
    assert plan.within_sd > 0
    assert plan.between_cell_sd > 0
    assert plan.conversations_per_side == plan.repeats_per_cell * 18
    smaller = plan_repeats(pilot, options=RepeatPlanOptions(effect=5.0))
    assert smaller.repeats_per_cell > plan.repeats_per_cell
    assert smaller.cells is not None
    assert smaller.cells > plan.cells
    assert "repeats per cell" in str(plan)
    assert "Assumed:" in str(plan)
    assert "noisy as the pilot" in str(plan)
    assert plan.pilot_df == 36  # 18 cells x (3 - 1) repeats
    with pytest.raises(ValueError, match=r"RepeatPlanOptions\.effect must be > 0"):
        RepeatPlanOptions(effect=0)


def test_plan_needs_repeats() -> None:
    pilot = synthetic_grades(SyntheticTruth.demo(seed=1), repeats=1, seed=2)
    with pytest.raises(ValueError, match="two scored repeats"):
        plan_repeats(pilot)
    assert np.isfinite(plan_repeats(synthetic_grades(SyntheticTruth.demo(), seed=1)).pilot_mde)
