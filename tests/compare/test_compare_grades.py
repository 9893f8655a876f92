"""compare_grades on hand-made and synthetic grades: scores, counts, tables, output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.compare import CompareOptions, Verdict, compare_grades, decide
from evalkit.grading import Grades
from tests.simulate import SyntheticTruth, synthetic_grades


def _rows(spec: list[tuple[str, str, str, float, str]]) -> pd.DataFrame:
    """Grades rows from (conversation, cell, rule, points, verdict)."""
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


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (-3.0, 4.0, Verdict.NO_DIFFERENCE),
        (1.0, 4.0, Verdict.NO_DIFFERENCE),
        (1.0, 9.0, Verdict.IMPROVED),
        (-12.0, -0.5, Verdict.REGRESSED),
        (-4.0, -1.0, Verdict.NO_DIFFERENCE),
        (-9.0, 2.0, Verdict.INSUFFICIENT_EVIDENCE),
        (float("nan"), float("nan"), Verdict.INSUFFICIENT_EVIDENCE),
    ],
    ids=["inside", "inside-positive", "improved", "regressed", "inside-negative", "wide", "nan"],
)
def test_verdict_table(low: float, high: float, expected: Verdict) -> None:
    assert decide(low, high, 5.0) is expected
    assert list(decide(np.array([low]), np.array([high]), 5.0)) == [expected]


def test_na_and_error_are_left_out_not_failed() -> None:
    base = _rows(
        [
            ("b1", "c1", "r1", 10.0, "pass"),
            ("b1", "c1", "r2", 30.0, "fail"),
            ("b2", "c1", "r1", 10.0, "pass"),
            ("b2", "c1", "r2", 30.0, "fail"),
        ]
    )
    cand = _rows(
        [
            ("d1", "c1", "r1", 10.0, "pass"),
            ("d1", "c1", "r2", 30.0, "error"),
            ("d2", "c1", "r1", 10.0, "pass"),
            ("d2", "c1", "r2", 30.0, "na"),
        ]
    )
    row = compare_grades(base, cand).summary.iloc[0]
    assert row["score_baseline"] == pytest.approx(25.0)  # 10 of 40 points
    assert row["score_candidate"] == pytest.approx(100.0)  # 10 of 10 applicable points
    assert (row["error_candidate"], row["na_candidate"]) == (1, 1)
    assert (row["error_baseline"], row["na_baseline"]) == (0, 0)


def test_repeats_reduced_within_cells_first() -> None:
    # Cell c1 has three repeats at 0, cell c2 one at 100: the grid mean is 50, not 25.
    spec = [(f"a{i}", "c1", "r1", 1.0, "fail") for i in range(3)] + [
        ("a3", "c2", "r1", 1.0, "pass")
    ]
    result = compare_grades(_rows(spec), _rows(spec))
    assert result.summary.iloc[0]["score_baseline"] == pytest.approx(50.0)


def test_unpaired_cells_listed_and_left_out_of_the_difference() -> None:
    truth = SyntheticTruth.demo(seed=4)
    base = synthetic_grades(truth, seed=1)
    cand = synthetic_grades(truth, seed=2, run_id="draft")
    cand = cand[cand["cell_id"] != "cell-005"]
    base_only = base[base["cell_id"] == "cell-007"].assign(cell_id="cell-new")
    base_only["conversation_id"] = base_only["conversation_id"] + "-copy"
    result = compare_grades(pd.concat([base, base_only]), cand)
    row = result.summary.iloc[0]
    assert (row["cells_paired"], row["cells_unpaired"]) == (17, 2)
    assert sorted(result.unpaired["cell_id"]) == ["cell-005", "cell-new"]
    assert set(result.unpaired["only_in"]) == {"baseline"}
    paired = result.by_cell[result.by_cell["paired"]]
    assert row["difference"] == pytest.approx(paired["difference"].mean())


def test_left_out_conversations_counted_by_status() -> None:
    """A ``Grades`` brings its run's left-out count by status; a bare frame knows none."""
    grades = synthetic_grades(SyntheticTruth.demo(seed=5), seed=3)
    candidate = Grades(grades, "synthetic", left_out={"dropped": 1, "error": 2})
    result = compare_grades(grades, candidate)
    assert result.left_out == {"baseline": {}, "candidate": {"dropped": 1, "error": 2}}
    assert result.summary.iloc[0]["left_out_candidate"] == 3
    assert not any("left out (not done) differ" in w for w in result.warnings)  # one side knows


def test_left_out_shares_that_differ_are_a_warning() -> None:
    """Both sides' runs known: many more conversations left out on one side is said (Fisher),
    a few is not."""
    grades = synthetic_grades(SyntheticTruth.demo(seed=5), seed=3)
    baseline = Grades(grades, "synthetic", left_out={"error": 1})
    many = compare_grades(baseline, Grades(grades, "synthetic", left_out={"error": 30}))
    said = [w for w in many.warnings if "left out (not done) differ" in w]
    assert said
    assert f"1 of {baseline.n + 1} baseline vs 30 of {baseline.n + 30} candidate" in said[0]
    few = compare_grades(baseline, Grades(grades, "synthetic", left_out={"error": 2}))
    assert not any("left out (not done) differ" in w for w in few.warnings)


def test_planted_rule_regression_is_named() -> None:
    truth = SyntheticTruth.demo(seed=6)
    p = truth.p_pass.copy()
    p[:, 2] = 0.02  # e.g. the script rule: passes in prod, fails in the draft
    draft = type(truth)(**{**truth.__dict__, "p_pass": p})
    result = compare_grades(
        synthetic_grades(truth, seed=1), synthetic_grades(draft, seed=2, run_id="draft")
    )
    by_rule = result.by_rule.set_index("rule_id")
    assert by_rule.loc["rule-2", "direction"] == "regressed"
    assert (by_rule["adjustment"] == "bonferroni").all()
    assert by_rule["adjusted_confidence"].iloc[0] == pytest.approx(1 - 0.05 / 8)
    for side in ("baseline", "candidate"):
        low, rate, high = (by_rule[f"pass_rate_{side}{s}"] for s in ("_low", "", "_high"))
        assert ((low <= rate) & (rate <= high) & (low >= 0) & (high <= 1)).all()
    assert "regressed: rule-2" in str(result)


def test_by_cell_pass_hat_k_by_hand() -> None:
    spec = [
        ("a1", "c1", "r1", 1.0, "pass"),
        ("a2", "c1", "r1", 1.0, "pass"),
        ("a3", "c1", "r1", 1.0, "fail"),
    ]
    grades = _rows(spec)
    one = compare_grades(grades, grades, options=CompareOptions(pass_k=1)).by_cell.iloc[0]
    two = compare_grades(grades, grades, options=CompareOptions(pass_k=2)).by_cell.iloc[0]
    default = compare_grades(grades, grades).by_cell.iloc[0]
    assert one["pass_hat_k_baseline"] == pytest.approx(2 / 3)
    assert two["pass_hat_k_baseline"] == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert default["k_baseline"] == 3
    assert default["pass_hat_k_baseline"] == 0.0


def test_by_persona_covers_every_persona() -> None:
    truth = SyntheticTruth.demo(seed=7)
    result = compare_grades(synthetic_grades(truth, seed=1), synthetic_grades(truth, seed=2))
    assert list(result.by_persona["persona_label"]) == [f"persona-{i}" for i in range(6)]
    assert (result.by_persona["cells_paired"] == 3).all()
    persona = result.by_persona.iloc[0]
    assert persona["difference_low"] <= persona["difference"] <= persona["difference_high"]


def test_outputs_json_str_and_html() -> None:
    truth = SyntheticTruth.demo(seed=8)
    result = compare_grades(
        synthetic_grades(truth, seed=1), synthetic_grades(truth.shifted(-20), seed=2)
    )
    payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert payload["verdict"] == result.verdict.value
    assert payload["summary"]["cells_paired"] == 18
    assert len(payload["by_rule"]) == 8
    text = str(result)
    assert text.startswith(result.verdict.value)
    assert "18 cells paired" in text
    assert "<table" in result._repr_html_()


def test_missing_columns_rejected() -> None:
    grades = synthetic_grades(SyntheticTruth.demo(seed=9))
    with pytest.raises(ValueError, match="verdict"):
        compare_grades(grades.drop(columns="verdict"), grades)
