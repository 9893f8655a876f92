"""Each result type's face (headline, summary DataFrame, to_dict, template HTML, short repr),
its typed attributes read from its table."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit import Comparison, Grades, TuneResult
from evalkit.compare import CompareOptions, compare_grades
from evalkit.tuning import VariantsOptions, compare_variants

from .result_face import assert_result_face, empty_why, grades_frame, sequential_run


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    return compare_grades(
        grades_frame(30, 7, "b"), grades_frame(30, 2, "c"), options=CompareOptions(min_effect=3.0)
    )


def test_comparison_face_and_typed_attributes(comparison: Comparison) -> None:
    assert_result_face(comparison)
    row = comparison.summary.iloc[0]
    assert comparison.summary.shape[0] == 1
    assert comparison.difference == pytest.approx(row["difference"])
    assert comparison.interval == pytest.approx((row["difference_low"], row["difference_high"]))
    assert comparison.n == row["cells_paired"] == 30
    assert comparison.verdict.value == "regressed"
    assert comparison.non_inferior is bool(row["non_inferior"])
    assert (comparison.confidence, comparison.min_effect) == (0.95, 3.0)
    page = comparison._repr_html_()
    assert "ek-verdict-regressed" in page
    assert json.loads(json.dumps(comparison.to_dict()))["verdict"] == "regressed"


def test_grades_summary_is_a_property() -> None:
    grades = Grades.of(grades_frame(5, 3, "g"))
    assert_result_face(grades)
    assert grades.n == 10
    pd.testing.assert_frame_equal(pd.DataFrame(grades.summary), grades.by_rule())
    narrow = grades.by_rule(confidence=0.5)
    wide = grades.by_rule().set_index("rule_id")
    assert (
        narrow.set_index("rule_id").loc["rule-b", "pass_rate_high"]
        < wide.loc["rule-b", "pass_rate_high"]
    )
    assert "&lt;b&gt;Greets&lt;/b&gt;" in grades._repr_html_()
    assert type(grades.summary.head()) is pd.DataFrame  # derived frames are plain


def test_tune_result_summary_is_the_leaderboard() -> None:
    base = grades_frame(30, 3, "c")
    result = compare_variants(
        base,
        {"better": grades_frame(30, 50, "b"), "same": grades_frame(30, 3, "s")},
        options=VariantsOptions(min_effect=3.0),
    )
    assert isinstance(result, TuneResult)
    assert_result_face(result)
    assert result.winner == "better"
    assert result.verdict == "improved"
    assert list(result.summary["variant"]) == list(result.leaderboard["variant"])
    lead = result.leaderboard.set_index("variant").loc["better"]
    # the gain: the held-out difference adjusted for the selection, not the all-cells one
    assert result.difference == pytest.approx(lead["adjusted_difference"])
    assert result.interval == pytest.approx((lead["adjusted_low"], lead["adjusted_high"]))
    assert result.n == result.details["cells"] == 30
    assert "ek-confirmed" in result._repr_html_()


def test_sequential_run_face() -> None:
    run = sequential_run()
    assert_result_face(run)
    assert (run.n, run.verdict, run.difference, run.interval) == (
        40,
        "regressed",
        -9.0,
        (-14.0, -4.0),
    )
    pd.testing.assert_frame_equal(run.summary, run.looks)
    assert "stopped at look 1" in run.headline()
    assert "60% saved" in run.headline()


def test_why_it_failed_face() -> None:
    why = empty_why()
    assert_result_face(why)
    assert why.n == 0
    assert why.findings[0].startswith("No simulation flag")
    assert str(why) == "\n".join(why.findings)
