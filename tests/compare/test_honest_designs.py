"""compare_grades in the designs users run every day: what it says, in numbers and in words."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from evalkit.compare import Verdict, compare_grades
from evalkit.grading import Grades
from tests.simulate import Design, GradeGenerator, SyntheticTruth, synthetic_grades


def _rows(spec: list[tuple[str, str, str, float, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(
        spec, columns=["conversation_id", "cell_id", "rule_id", "points", "verdict"]
    )
    frame["points_awarded"] = np.where(
        frame["verdict"] == "pass",
        frame["points"],
        np.where(frame["verdict"] == "fail", 0.0, np.nan),
    )
    frame["persona_label"] = "p-" + frame["cell_id"]
    frame["title"] = "Title " + frame["rule_id"]
    return frame


def _grid(cells: int, repeats: int, verdict_of: dict[str, str], prefix: str) -> pd.DataFrame:
    return _rows(
        [
            (f"{prefix}{c}-{i}", f"c{c}", rule, 50.0, verdict)
            for c in range(cells)
            for i in range(repeats)
            for rule, verdict in verdict_of.items()
        ]
    )


def test_one_repeat_per_cell_gets_a_paired_cells_interval() -> None:
    truth = SyntheticTruth.demo(seed=3, cells=60, personas=10)
    base = synthetic_grades(truth, repeats=1, seed=1)
    cand = synthetic_grades(truth.shifted(-30), repeats=1, seed=2, run_id="draft")
    result = compare_grades(base, cand)
    row = result.summary.iloc[0]
    assert row["method"] == "paired_cells"
    assert "one repeat per cell" in row["method_reason"]
    assert row["df"] == 59
    assert math.isfinite(row["se"])
    assert math.isfinite(row["difference_low"])
    assert result.verdict is Verdict.REGRESSED  # a 30-point drop is seen with one repeat
    assert not row["non_inferior"]
    assert "nan" not in str(result).lower()


def test_one_cell_without_repeats_says_so_in_words() -> None:
    base = _rows([("b1", "c1", "r1", 50.0, "pass"), ("b1", "c1", "r2", 50.0, "pass")])
    cand = _rows([("d1", "c1", "r1", 50.0, "pass"), ("d1", "c1", "r2", 50.0, "fail")])
    result = compare_grades(base, cand)
    row = result.summary.iloc[0]
    assert row["method"] == "none"
    assert math.isnan(row["difference_low"])
    assert result.verdict is Verdict.INSUFFICIENT_EVIDENCE
    text = str(result)
    assert "nan" not in text.lower()
    assert "no interval" in text
    assert any("No interval" in w for w in result.warnings)
    assert json.dumps(result.to_dict())  # NaN bounds become null, not invalid JSON
    assert result.to_dict()["summary"]["difference_low"] is None


def test_repeats_that_all_agree_still_give_a_width() -> None:
    base = _grid(1, 3, {"r1": "pass", "r2": "pass"}, "b")
    cand = _grid(1, 3, {"r1": "pass", "r2": "fail"}, "d")
    row = compare_grades(base, cand).summary.iloc[0]
    assert row["difference"] == -50.0
    assert row["difference_low"] < -50.0 < row["difference_high"]
    many = compare_grades(_grid(18, 3, {"r1": "pass"}, "b"), _grid(18, 3, {"r1": "pass"}, "d"))
    assert many.summary.iloc[0]["difference_low"] < 0 < many.summary.iloc[0]["difference_high"]


def test_rule_differences_stay_within_100_points() -> None:
    base = _grid(18, 3, {"r1": "pass", "r2": "pass"}, "b")
    cand = _grid(18, 3, {"r1": "pass", "r2": "fail"}, "d")
    result = compare_grades(base, cand)
    rule = result.by_rule.set_index("rule_id").loc["r2"]
    assert rule["difference"] == -100.0
    assert rule["difference_low"] >= -100.0
    assert rule["difference_high"] < 0
    assert rule["direction"] == "regressed"
    assert (result.by_rule["difference_low"] >= -100).all()
    assert (result.by_rule["difference_high"] <= 100).all()
    assert set(result.by_rule["family"]) == {"2 rules"}


def test_informative_errors_bound_the_verdict_and_warn() -> None:
    grades = GradeGenerator().draw(Design("inf", informative_errors=0.9), 1, seed=5, effect=0.0)
    result = compare_grades(grades.frame(0, "baseline"), grades.frame(0, "candidate"))
    row = result.summary.iloc[0]
    assert row["errors_differ"]
    assert row["worst_case_low"] < row["difference_low"]
    assert row["best_case_high"] >= row["difference_high"]
    assert result.verdict is not Verdict.IMPROVED
    assert any("Judge errors differ" in w for w in result.warnings)
    text = str(result)
    assert "warning: Judge errors differ" in text
    assert "judged rules in error" in text
    assert "Judge errors differ" in result._repr_html_()


def test_printed_line_tells_what_was_left_out() -> None:
    truth = SyntheticTruth.demo(seed=4)
    base = synthetic_grades(truth, seed=1)
    cand = synthetic_grades(truth, seed=2, run_id="draft")
    cand = cand[cand["cell_id"] != "cell-005"]
    result = compare_grades(base, Grades(cand, "synthetic", left_out={"dropped": 1}))
    lines = str(result).splitlines()
    row = result.summary.iloc[0]
    assert lines[0].startswith(f"{result.verdict.value}: difference")
    assert f"{row['scored_baseline']} vs {row['scored_candidate']} conversations scored" in lines[0]
    assert lines[1].strip().startswith("non-inferior:")
    assert "not done 0 / 1 dropped" in lines[2]
    assert f"judged rules in error {row['error_baseline']} / {row['error_candidate']}" in lines[2]
    assert f"n/a (the rule did not apply) {row['na_baseline']} / {row['na_candidate']}" in lines[2]
    assert "unpaired cells 1 / 0" in lines[2]
    assert any("scored on one side only" in w for w in result.warnings)


def test_card_counts_only_scored_conversations() -> None:
    base = _grid(6, 3, {"r1": "pass", "r2": "fail"}, "b")
    cand = _grid(6, 3, {"r1": "pass", "r2": "fail"}, "d")
    unscored = _rows([("d-x", "c0", "r1", 50.0, "na"), ("d-x", "c0", "r2", 50.0, "error")])
    result = compare_grades(base, pd.concat([cand, unscored], ignore_index=True))
    row = result.summary.iloc[0]
    assert row["conversations_candidate"] == 19
    assert row["scored_candidate"] == 18
    card = result._repr_html_()
    assert "<td>candidate</td><td>18</td>" in card
    assert "1 with no applicable rule" in card
    assert "Non-inferior:" in card


def test_non_inferiority_is_what_teams_ask() -> None:
    truth = SyntheticTruth.demo(seed=1)
    base = synthetic_grades(truth, repeats=12, seed=3)
    same = compare_grades(base, synthetic_grades(truth, repeats=12, seed=4, run_id="d"))
    worse = compare_grades(base, synthetic_grades(truth.shifted(-20), repeats=12, seed=5))
    assert same.summary.iloc[0]["non_inferior"]
    assert same.summary.iloc[0]["non_inferiority_bound"] > -5
    assert "non-inferior: yes" in str(same)
    assert not worse.summary.iloc[0]["non_inferior"]
    assert "non-inferior: not shown" in str(worse)
    # the one-sided bound is the lower end of the 90% (two one-sided tests) interval
    row = same.summary.iloc[0]
    assert row["non_inferiority_bound"] == pytest.approx(row["equivalence_low"])
    assert row["difference_low"] < row["equivalence_low"]


def test_per_persona_uses_the_headline_method_and_one_family() -> None:
    truth = SyntheticTruth.demo(seed=2)
    result = compare_grades(synthetic_grades(truth, seed=1), synthetic_grades(truth, seed=2))
    personas = result.by_persona
    assert set(personas["method"]) == {result.summary.iloc[0]["method"]}
    assert set(personas["family"]) == {"6 personas"}
    assert (personas["adjusted_confidence"] == 1 - 0.05 / 6).all()
