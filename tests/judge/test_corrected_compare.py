"""Judge-corrected comparisons: what the summary, by_rule and warnings say, and the plumbing
from stored labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit import Scorecard
from evalkit.compare import compare_grades
from evalkit.flows import compare_runs
from evalkit.grading import LabelOptions, grade_run, label_queue
from evalkit.store import Label

from ..grading.helpers import FakeJudge
from ..grading.test_grade import CARD, make_run
from .world import World, effects, expected_rates, labels_for, pair

BASE = {"tone": 0.8, "resolves": 0.8, "greets": 0.9}
DROP = {"tone": 0.5, "resolves": 0.8, "greets": 0.9}


def _labelled(seed: int, n: int = 150) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    b, c = pair(World(), BASE, DROP, seed)
    labels = pd.concat(
        [
            labels_for(label_queue(b, options=LabelOptions(n=n, seed=seed)), b),
            labels_for(label_queue(c, options=LabelOptions(n=n, seed=seed + 1)), c),
        ]
    )
    return b, c, labels


def test_labels_move_a_lenient_judges_rates_back_toward_the_truth() -> None:
    b, c, labels = _labelled(11)
    raw = compare_grades(b, c)
    fixed = compare_grades(b, c, labels=labels)
    row = fixed.summary.iloc[0]
    assert row["judge_correction"] == "ppi++"
    assert row["labelled_baseline"] == 150
    assert row["labelled_candidate"] == 150
    assert raw.summary.iloc[0]["judge_correction"] == "none"
    rules = fixed.by_rule.set_index("rule_id")
    truth = expected_rates(DROP, effects(World(), 11))
    # the judge's raw rate stays beside the corrected one
    assert rules.loc["tone", "judge_pass_rate_candidate"] == pytest.approx(
        raw.by_rule.set_index("rule_id").loc["tone", "pass_rate_candidate"]
    )
    assert rules.loc["tone", "judge_pass_rate_candidate"] > truth["tone"] + 0.1  # lenient
    assert rules.loc["tone", "pass_rate_candidate_low"] <= truth["tone"]
    assert truth["tone"] <= rules.loc["tone", "pass_rate_candidate_high"]
    assert bool(rules.loc["tone", "judge_corrected"])
    assert not bool(rules.loc["greets", "judge_corrected"])  # a check is never corrected
    # the difference is larger once corrected (the judge hid part of the drop)
    assert fixed.summary.iloc[0]["difference"] < raw.summary.iloc[0]["difference"]
    assert any("judge-corrected with 150 + 150 hand labels" in w for w in fixed.warnings)
    assert "judge-corrected with 150 + 150 hand labels" in str(fixed)


def test_hand_picked_labels_and_too_few_labels_are_said_not_used() -> None:
    b, c, labels = _labelled(12)
    hand = labels.assign(inclusion_probability=np.nan)
    result = compare_grades(b, c, labels=hand)
    assert result.summary.iloc[0]["judge_correction"] == "none"
    assert any("no inclusion probability" in w for w in result.warnings)
    assert (
        result.summary.iloc[0]["difference"] == compare_grades(b, c).summary.iloc[0]["difference"]
    )
    # enough labels on one side only: the rule is corrected on neither
    one_side = labels[labels["conversation_id"].str.startswith("base")]
    lopsided = compare_grades(b, c, labels=one_side)
    assert lopsided.summary.iloc[0]["judge_correction"] == "none"
    assert any("candidate: 0 usable label(s), fewer than 10" in w for w in lopsided.warnings)
    # labels given as a (baseline, candidate) pair work as one frame does
    split = (labels[labels["conversation_id"].str.startswith("base")],
             labels[labels["conversation_id"].str.startswith("cand")])  # fmt: skip
    paired = compare_grades(b, c, labels=split)
    one = compare_grades(b, c, labels=labels)
    assert paired.summary.iloc[0]["difference"] == pytest.approx(one.summary.iloc[0]["difference"])
    with pytest.raises(ValueError, match="inclusion_probability must be in"):
        compare_grades(b, c, labels=labels.assign(inclusion_probability=1.5))


def test_a_perfect_judge_with_labels_is_no_wider_than_the_judge_alone() -> None:
    b, c = pair(World(false_pass=0.0, false_fail=0.0), BASE, DROP, 13)
    labels = pd.concat(
        [
            labels_for(label_queue(b, options=LabelOptions(n=150, seed=1)), b),
            labels_for(label_queue(c, options=LabelOptions(n=150, seed=2)), c),
        ]
    )
    alone = compare_grades(b, c).summary.iloc[0]
    fixed = compare_grades(b, c, labels=labels).summary.iloc[0]
    assert fixed["judge_correction"] == "ppi++"
    width = fixed["difference_high"] - fixed["difference_low"]
    assert width <= 1.05 * (alone["difference_high"] - alone["difference_low"])


def test_compare_runs_reads_stored_labels(tmp_path: Path) -> None:
    runs = []
    for name in ("b", "c"):
        run = make_run(tmp_path / name)
        grade_run(run, CARD, judge=FakeJudge(lambda task, rule: "pass"))
        run.add_labels([Label("c1", "confirm", "fail", inclusion_probability=0.5)])
        runs.append(run)
    judge = FakeJudge(lambda task, rule: "pass")
    result = compare_runs(runs[0], runs[1], Scorecard.validate(CARD), judge=judge, labels="stored")
    row = result.summary.iloc[0]
    assert row["judge_correction"] == "none"  # one label a side: too few to correct
    assert any("fewer than 10" in w for w in result.warnings)
    with pytest.raises(ValueError, match='"stored"'):
        compare_runs(runs[0], runs[1], Scorecard.validate(CARD), judge=judge, labels="labels")


def test_a_corrected_comparison_takes_its_degrees_of_freedom_from_the_labels() -> None:
    """Twenty labels a rule a side among 200 conversations: the headline's degrees of
    freedom are the labels' (Satterthwaite), not the ~320 of the design, and the interval is
    the wider for it."""
    world = World(cells=40, repeats=5)
    b, c = pair(world, BASE, BASE, 21)
    labels = pd.concat(
        [
            labels_for(label_queue(b, options=LabelOptions(n=40, seed=1)), b),
            labels_for(label_queue(c, options=LabelOptions(n=40, seed=2)), c),
        ]
    )
    fixed = compare_grades(b, c, labels=labels)
    raw = compare_grades(b, c)
    row = fixed.summary.iloc[0]
    assert raw.summary.iloc[0]["df"] > 250  # the design: repeats within 40 cells a side
    assert 10 <= row["df"] <= 120
    # the interval is Student's t at those degrees of freedom (Wald in the interior)
    half = (row["difference_high"] - row["difference_low"]) / 2
    assert half >= stats.t.ppf(0.975, row["df"]) * row["se"] * 0.99
