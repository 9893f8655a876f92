"""compare_grades is one pass (issue 32, item 8): the inputs are read into both sides once,
then the headline, the breakdowns and the warnings read those sides; nothing goes back to the
grades frames to re-derive cells, rules, verdict codes, personas or titles."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd
import pytest

from evalkit.compare import CompareOptions, _compare, _sides, compare_grades
from tests.simulate._generator import Design, GradeGenerator


def _pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    drawn = GradeGenerator().draw(
        Design("one-pass", cells=6, repeats=2, informative_errors=0.3), trials=1, seed=3
    )
    return drawn.frame(0, "baseline"), drawn.frame(0, "candidate")  # type: ignore[return-value]


def _count(monkeypatch: pytest.MonkeyPatch, calls: Counter[str], owner: Any, name: str) -> None:
    original = getattr(owner, name)
    if isinstance(original, classmethod | staticmethod):
        original = original.__func__

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_sides_are_built_once_and_read_by_every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    baseline, candidate = _pair()
    expected = compare_grades(baseline, candidate).to_dict()
    calls: Counter[str] = Counter()
    for name in ("codes_for", "unique_values", "first_values"):
        _count(monkeypatch, calls, _sides, name)
    _count(monkeypatch, calls, _compare, "decide_headline")
    side_builds: list[str] = []
    build = _sides.Side.build.__func__  # type: ignore[attr-defined]

    def counted_build(cls: type, grades: pd.DataFrame, cells: Any, name: str, *a: Any) -> Any:
        side_builds.append(name)
        return build(cls, grades, cells, name, *a)

    monkeypatch.setattr(_sides.Side, "build", classmethod(counted_build))
    got = compare_grades(baseline, candidate).to_dict()
    assert got == expected  # counting changes nothing
    assert side_builds == ["baseline", "candidate"]
    # cells and rules once over both sides; each side's cell, verdict and rule codes once
    assert calls["unique_values"] == 2
    assert calls["codes_for"] == 6
    assert calls["first_values"] == 2  # persona of each cell, title and points of each rule
    assert calls["decide_headline"] == 1


def test_breakdowns_and_warnings_see_the_sides_rules_and_cells() -> None:
    baseline, candidate = _pair()
    comparison = compare_grades(baseline, candidate)
    rules = sorted(set(baseline["rule_id"]) | set(candidate["rule_id"]))
    cells = sorted(set(baseline["cell_id"]) | set(candidate["cell_id"]))
    assert list(comparison.by_rule["rule_id"]) == rules
    assert list(comparison.by_cell["cell_id"]) == cells
    for label, frame in (("baseline", baseline), ("candidate", candidate)):
        counts = frame.groupby("rule_id")["verdict"].value_counts().unstack(fill_value=0)
        for verdict in ("na", "error"):
            column = counts[verdict] if verdict in counts else pd.Series(0, index=counts.index)
            assert list(comparison.by_rule[f"{verdict}_{label}"]) == list(column.loc[rules])


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_history_reads_the_same_headline_and_scores_as_compare_grades(seed: int) -> None:
    """History reads only verdicts and scores, of hundreds of comparisons: ``headline`` and
    ``side_score`` give what the full comparison's summary says (one formula), without the
    summary row, breakdowns and warnings."""
    drawn = GradeGenerator().draw(
        Design("headline", cells=8, repeats=3, informative_errors=0.3), trials=1, seed=seed
    )
    baseline, candidate = drawn.frame(0, "baseline"), drawn.frame(0, "candidate")
    options = CompareOptions(confidence=0.9, min_effect=3.0)
    full = compare_grades(baseline, candidate, options=options).summary.iloc[0]
    decision = _compare.grades_headline(baseline, candidate, options).decision
    assert decision.verdict.value == full["verdict"]
    assert (decision.interval.estimate, decision.interval.low, decision.interval.high) == (
        full["difference"],
        full["difference_low"],
        full["difference_high"],
    )
    for side, frame in (("baseline", baseline), ("candidate", candidate)):
        alone = compare_grades(frame, frame, options=options).summary.iloc[0]
        score = _compare.side_score(frame, 0.9)
        assert (score.estimate, score.low, score.high) == (
            alone["score_candidate"],
            alone["score_candidate_low"],
            alone["score_candidate_high"],
        ), side
