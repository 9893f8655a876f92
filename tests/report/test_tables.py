"""The rule table: every row in words, titles whole, rules no conversation applied to named."""

from __future__ import annotations

from evalkit.compare import Comparison, compare_grades
from evalkit.report import rule_table
from evalkit.report._tables import NOT_COMPARED, unscored_reason
from tests.simulate import SyntheticTruth, synthetic_grades


def _comparison(never: str = "rule-3", errors_on: str | None = None) -> Comparison:
    truth = SyntheticTruth.demo(seed=8)
    sides = []
    for seed, t in ((1, truth), (2, truth.shifted(-10))):
        grades = synthetic_grades(t, repeats=3, seed=seed)
        rows = grades["rule_id"] == never
        grades.loc[rows, "verdict"] = "na"
        if errors_on is not None and seed == 2:
            grades.loc[rows & grades["repeat"].eq(0), "verdict"] = errors_on
        grades.loc[rows, "points_awarded"] = 0.0
        sides.append(grades)
    return compare_grades(*sides)


def test_every_row_has_words_in_every_cell() -> None:
    comparison = _comparison()
    table = rule_table(comparison)
    assert len(table) == len(comparison.by_rule)
    assert set(table["title"]) == set(comparison.by_rule["title"])
    for row in table.to_dict("records"):
        assert all(str(value).strip() not in ("", "–", "nan", "None") for value in row.values()), (
            row
        )


def test_a_rule_no_conversation_applied_to_says_so() -> None:
    table = rule_table(_comparison()).set_index("rule")
    row = table.loc["rule-3"]
    assert row["direction"] == NOT_COMPARED
    assert row["baseline pass rate"].startswith("not applicable (")
    assert row["candidate pass rate"].startswith("not applicable (")
    assert row["difference (points)"].startswith("applies to no conversation: n/a in all")
    assert table.index[-1] == "rule-3"  # listed after the rules that were compared


def test_judge_errors_are_named_apart_from_na() -> None:
    comparison = _comparison(errors_on="error")
    (row,) = [r for r in comparison.by_rule.to_dict("records") if r["rule_id"] == "rule-3"]
    reason = unscored_reason(row)
    assert reason is not None
    assert "judge error" in reason
    assert "candidate" in reason


def test_compared_rules_have_no_reason() -> None:
    comparison = _comparison()
    reasons = {r["rule_id"]: unscored_reason(r) for r in comparison.by_rule.to_dict("records")}
    assert reasons.pop("rule-3") is not None
    assert set(reasons.values()) == {None}
