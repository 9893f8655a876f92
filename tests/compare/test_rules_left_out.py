"""A score that leaves out whole rules (not one pass or fail, only errors: a judge that did not
answer) is not the scorecard's score: the grades say so, and no comparison, look or history
verdict rests on it. A rule with a single decided grade is not left out (the error bounds of
:mod:`evalkit.compare._decision` handle partial errors)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.compare import (
    CompareOptions,
    SequentialPlan,
    Verdict,
    compare_grades,
    compare_sequential,
)
from evalkit.compare import grades_headline as history_headline
from evalkit.grading import Grades
from tests.simulate import Design, GradeGenerator

DESIGN = Design("18 cells x 6 repeats", repeats=6)
TRIALS = 12


def without_judge(frame: pd.DataFrame, *rules: str, keep: int = 0) -> pd.DataFrame:
    """``frame`` with every grade of ``rules`` an error, except the first ``keep`` rows."""
    out = frame.copy()
    hit = np.flatnonzero(out["rule_id"].isin(rules).to_numpy())[keep:]
    out.loc[out.index[hit], "verdict"] = "error"
    out.loc[out.index[hit], "points_awarded"] = np.nan
    return out


@pytest.fixture(scope="module")
def pairs() -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """A planted 20-point drop: the interval alone would decide nearly every pair."""
    grades = GradeGenerator().draw(DESIGN, TRIALS, 5, -20.0)
    return [(grades.frame(t, "baseline"), grades.frame(t, "candidate")) for t in range(TRIALS)]


def test_grades_name_the_rules_and_points_their_score_leaves_out(
    pairs: list[tuple[pd.DataFrame, pd.DataFrame]],
) -> None:
    frame = pairs[0][1]
    whole = Grades.of(frame)
    assert whole.rules_left_out == []
    assert "not the scorecard's score" not in whole.headline()
    cut = Grades.of(without_judge(frame, "rule-1", "rule-5"))
    assert [(r.rule_id, r.points) for r in cut.rules_left_out] == [
        ("rule-1", 20.0),
        ("rule-5", 10.0),
    ]
    assert "without rule-1, rule-5 (30 of 100 points; no pass or fail, 216 errors)" in (
        cut.headline()
    )
    assert cut.to_dict()["rules_left_out"][1] == {
        "rule_id": "rule-5",
        "points": 10.0,
        "errors": 108,
    }
    assert "without rule-1, rule-5 (30 of 100 points" in cut._repr_html_()
    one_decided = Grades.of(without_judge(frame, "rule-1", keep=1))
    assert one_decided.rules_left_out == []


def test_no_comparison_verdict_rests_on_it_whatever_the_interval_says(
    pairs: list[tuple[pd.DataFrame, pd.DataFrame]],
) -> None:
    decided = 0
    for base, cand in pairs:
        plain = compare_grades(base, cand)
        decided += plain.verdict is not Verdict.INSUFFICIENT_EVIDENCE
        for b, c, side in (
            (base, without_judge(cand, "rule-0"), "candidate"),
            (without_judge(base, "rule-0"), cand, "baseline"),
        ):
            refused = compare_grades(b, c)
            assert refused.verdict is Verdict.INSUFFICIENT_EVIDENCE
            assert not refused.non_inferior
            assert f"{side}: rule-0 (25 of 100 points" in refused.reason
            assert set(refused.by_persona["direction"]) == {"insufficient_evidence"}
            # the other rules' own pass rates still compare
            assert len(refused.by_rule) == 6
    assert decided >= TRIALS - 1  # without the cut the drop is caught


def test_the_history_verdict_refuses_it_too(
    pairs: list[tuple[pd.DataFrame, pd.DataFrame]],
) -> None:
    base, cand = pairs[0]
    options = CompareOptions()
    assert history_headline(base, cand, options).decision.verdict is Verdict.REGRESSED
    refused = history_headline(base, without_judge(cand, "rule-2"), options)
    assert refused.decision.verdict is Verdict.INSUFFICIENT_EVIDENCE
    assert refused.refused


def test_a_sequential_look_neither_stops_for_futility_nor_claims_anything() -> None:
    plan = SequentialPlan(6)
    grades = GradeGenerator().draw(DESIGN, 40, 5, 0.0)
    futile = 0
    for trial in range(40):
        base, cand = grades.frame(trial, "baseline"), grades.frame(trial, "candidate")
        futile += (
            compare_sequential(base, cand, plan, look=5).summary.iloc[0]["stopped_for"]
            == "futility"
        )
        look = compare_sequential(base, without_judge(cand, "rule-0"), plan, look=5)
        assert look.verdict is Verdict.INSUFFICIENT_EVIDENCE
        assert look.stop is False, look.summary.iloc[0]["stopped_for"]
    assert futile >= 10  # what the cut takes away: most of these stop for futility at look 5
