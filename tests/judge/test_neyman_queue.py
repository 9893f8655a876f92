"""Neyman allocation of the label queue by judge verdict: more labels where the labels so far
(or a pilot) show the judge errs more, top-ups that never redraw a labelled pair, inclusion
probabilities that are the stratum's labelled share, and a plan that needs no more labels than
the proportional one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.grading import LabelOptions, grade_run, label_queue, plan_labels
from evalkit.store import Label, load_run

from ..grading.helpers import FakeJudge
from ..grading.test_grade import CARD, make_run
from .world import World, labels_for, pair

RATES = {"tone": 0.6, "resolves": 0.8, "greets": 0.9}


def _grades() -> pd.DataFrame:
    """A judge that never fails a true pass and passes 40% of true fails: its fails are
    all right, its passes hide the errors."""
    return pair(World(cells=40, repeats=5, false_pass=0.4, false_fail=0.0), RATES, RATES, 5)[0]


def _counts(queue: pd.DataFrame, rule: str = "tone") -> dict[str, int]:
    mine = queue[queue["rule_id"] == rule]
    return {v: int((mine["verdict"] == v).sum()) for v in ("pass", "fail")}


def test_neyman_tops_up_where_the_labels_so_far_show_the_judge_errs() -> None:
    grades = _grades()
    first = label_queue(grades, options=LabelOptions(n=40, seed=1))
    so_far = labels_for(first, grades)
    neyman = label_queue(grades, so_far, options=LabelOptions(n=60, seed=2, allocation="neyman"))
    even = label_queue(grades, so_far, options=LabelOptions(n=60, seed=2))
    assert len(neyman) == len(even) == 60
    # the judge's fails are all true fails: Neyman spends the top-up on its passes
    assert _counts(neyman)["pass"] > _counts(even)["pass"]
    assert _counts(neyman)["fail"] < _counts(even)["fail"]
    # what Neyman aims at: labels (old and new) in proportion to N_h S_h within the rule
    tone = grades[grades["rule_id"] == "tone"]
    sizes = tone["verdict"].value_counts()
    old = so_far.merge(tone[["conversation_id", "rule_id", "verdict"]])
    old = old[old["rule_id"] == "tone"]
    spread = {}
    for verdict in ("pass", "fail"):
        labels = old[old["verdict"] == verdict]["label"]
        q = ((labels == "pass").sum() + 0.5) / (len(labels) + 1)
        spread[verdict] = np.sqrt(q * (1 - q))
    total = len(old) + sum(_counts(neyman).values())
    wanted = sizes["pass"] * spread["pass"] / sum(sizes[v] * spread[v] for v in spread)
    got = (old["verdict"] == "pass").sum() + _counts(neyman)["pass"]
    assert abs(got - wanted * total) <= 2


def test_a_top_up_never_redraws_a_labelled_pair_and_gives_the_stratums_share() -> None:
    grades = _grades()
    so_far = labels_for(label_queue(grades, options=LabelOptions(n=40, seed=1)), grades)
    for allocation in ("proportional", "neyman"):
        opts = LabelOptions(n=50, seed=3, allocation=allocation)  # type: ignore[arg-type]
        queue = label_queue(grades, so_far, options=opts)
        keys = set(zip(so_far["conversation_id"], so_far["rule_id"], strict=True))
        assert not keys & set(zip(queue["conversation_id"], queue["rule_id"], strict=True))
        judged = grades[grades["grader"] != "check:regex"]
        sizes = judged.groupby(["rule_id", "verdict"]).size()
        had = so_far.merge(judged[["conversation_id", "rule_id", "verdict"]])
        had = had.groupby(["rule_id", "verdict"]).size()
        for (rule, verdict), group in queue.groupby(["rule_id", "verdict"]):
            before = int(had.get((rule, verdict), 0))
            share = (before + len(group)) / sizes[(rule, verdict)]
            assert group["inclusion_probability"].to_numpy() == pytest.approx(share)


def test_a_top_up_is_a_simple_random_draw_of_the_rest_of_its_stratum() -> None:
    """Given the labels so far, every unlabelled member of a stratum is equally likely to be
    drawn (binomial bounds over 300 seeds): the union of the draws stays a simple random
    sample of the stratum, which is what the stratified estimator needs."""
    grades = _grades()
    so_far = labels_for(label_queue(grades, options=LabelOptions(n=40, seed=1)), grades)
    labelled = set(so_far["conversation_id"][so_far["rule_id"] == "tone"])
    members = grades[(grades["rule_id"] == "tone") & (grades["verdict"] == "pass")]
    rest = [c for c in members["conversation_id"] if c not in labelled]
    hits = dict.fromkeys(rest, 0)
    seeds = 300
    for seed in range(seeds):
        opts = LabelOptions(n=30, rules=["tone"], seed=seed, allocation="neyman")
        queue = label_queue(grades, so_far, options=opts)
        drawn = queue[queue["verdict"] == "pass"]["conversation_id"]
        for cid in drawn:
            hits[cid] += 1
        p = len(drawn) / len(rest)
    counts = np.array(list(hits.values()))
    low, high = stats.binom.ppf([0.0001, 0.9999], seeds, p)
    assert counts.min() >= low
    assert counts.max() <= high


def test_a_pilot_sets_the_spreads_before_the_run_has_labels(tmp_path: Path) -> None:
    grades = _grades()
    pilot_grades = pair(World(cells=40, repeats=5, false_pass=0.4, false_fail=0.0), RATES, RATES, 6)
    pilot = (pilot_grades[0], labels_for(label_queue(pilot_grades[0],
                                                     options=LabelOptions(n=80)), pilot_grades[0]))  # fmt: skip
    neyman = label_queue(grades, options=LabelOptions(n=40, allocation="neyman", pilot=pilot))
    even = label_queue(grades, options=LabelOptions(n=40))
    assert _counts(neyman)["pass"] > _counts(even)["pass"]
    # without labels or a pilot, Neyman has no spreads to read: it is proportional
    unknown = label_queue(grades, options=LabelOptions(n=40, allocation="neyman"))
    assert _counts(unknown) == _counts(even)
    with pytest.raises(TypeError, match=r"LabelOptions\.pilot"):
        LabelOptions(pilot="runs/prod")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"LabelOptions\.allocation must be one of"):
        LabelOptions(allocation="even")  # type: ignore[arg-type]


def test_the_neyman_plan_needs_no_more_labels_than_the_proportional_one() -> None:
    grades = _grades()
    so_far = labels_for(label_queue(grades, options=LabelOptions(n=60, seed=1)), grades)
    even = plan_labels(grades, so_far, options=LabelOptions(halfwidth=8)).set_index("rule_id")
    neyman = plan_labels(
        grades, so_far, options=LabelOptions(halfwidth=8, allocation="neyman")
    ).set_index("rule_id")
    assert (neyman["needed"] <= even["needed"]).all()
    assert neyman.loc["tone", "needed"] < even.loc["tone", "needed"]  # spreads differ most


def test_labels_queue_command_takes_the_allocation_and_a_pilot(tmp_path: Path) -> None:
    runs = []
    for name in ("pilot", "run"):
        run = make_run(tmp_path / name)
        grade_run(run, CARD, judge=FakeJudge(lambda task, rule: "pass"))
        runs.append(run)
    pilot, run = runs
    pilot.add_labels([Label("c1", "confirm", "fail", inclusion_probability=0.5)])
    runner = CliRunner()
    base = ["labels", "queue", run.run_id, "--store", str(run.path.parent), "-n", "2"]
    shown = runner.invoke(app, [*base, "--allocation", "neyman", "--pilot", str(pilot.path)])
    assert shown.exit_code == 0, shown.output
    assert "inclusion_probability" in shown.output
    bad = runner.invoke(app, [*base, "--allocation", "even"])
    assert bad.exit_code != 0
    assert "--allocation must be one of proportional, neyman" in bad.output
    assert load_run(run.path).labels().empty
