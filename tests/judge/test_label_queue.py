"""The label queue (stratified, seeded, with inclusion probabilities), labels that carry
them, ``plan_labels``, and labels that are refused with the field named."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.grading import Grades, LabelOptions, grade_run, label_queue, plan_labels, planned_n
from evalkit.store import Label, import_labels, load_run

from ..grading.helpers import FakeJudge
from ..grading.test_grade import CARD, make_run
from .world import World, labels_for, pair, true_frame


def _grades() -> pd.DataFrame:
    return pair(
        World(cells=20, repeats=5),
        {"tone": 0.7, "resolves": 0.8, "greets": 0.9},
        {"tone": 0.7, "resolves": 0.8, "greets": 0.9},
        3,
    )[0]


def test_the_queue_draws_judged_pairs_within_strata_with_their_probabilities() -> None:
    grades = _grades()
    queue = label_queue(grades, options=LabelOptions(n=40, seed=7))
    assert len(queue) == 40
    assert not queue.duplicated(["conversation_id", "rule_id"]).any()  # without replacement
    assert set(queue["rule_id"]) == {"tone", "resolves"}  # never the deterministic check
    judged = grades[grades["grader"] != "check:regex"]
    sizes = judged.groupby(["rule_id", "verdict"]).size()
    for (rule, verdict), group in queue.groupby(["rule_id", "verdict"]):
        # every member of a stratum has probability drawn / stratum size
        assert group["inclusion_probability"].nunique() == 1
        assert group["inclusion_probability"].iloc[0] == pytest.approx(
            len(group) / sizes[(rule, verdict)]
        )
        assert len(group) >= 2  # every stratum gets labels
    # the verdicts are the judge's
    merged = queue.merge(judged, on=["conversation_id", "rule_id"], suffixes=("", "_g"))
    assert (merged["verdict"] == merged["verdict_g"]).all()
    again = label_queue(grades, options=LabelOptions(n=40, seed=7))
    pd.testing.assert_frame_equal(queue, again)  # seeded
    assert not label_queue(grades, options=LabelOptions(n=40, seed=8)).equals(queue)


def test_the_queue_is_a_simple_random_draw_within_a_stratum() -> None:
    grades = _grades()
    counts: dict[str, int] = {}
    for seed in range(200):
        q = label_queue(grades, options=LabelOptions(n=20, rules=["tone"], seed=seed))
        q = q[q["verdict"] == "pass"]
        for cid in q["conversation_id"]:
            counts[cid] = counts.get(cid, 0) + 1
        p = float(q["inclusion_probability"].iloc[0])
    members = grades[(grades["rule_id"] == "tone") & (grades["verdict"] == "pass")]
    hits = np.array([counts.get(c, 0) for c in members["conversation_id"]])
    # each member drawn about 200 p times: no member starved or favoured (binomial bounds)
    sd = np.sqrt(200 * p * (1 - p))
    assert np.abs(hits - 200 * p).max() < 5 * sd


def test_bad_queue_requests_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"LabelOptions\.n must be a positive"):
        label_queue(_grades(), options=LabelOptions(n=0))
    with pytest.raises(ValueError, match="rules: nope not in the grades"):
        label_queue(_grades(), options=LabelOptions(rules=["nope"]))


def test_plan_labels_asks_for_fewer_labels_once_labels_show_a_good_judge() -> None:
    grades = _grades()
    before = plan_labels(grades, options=LabelOptions(halfwidth=8)).set_index("rule_id")
    queue = label_queue(grades, options=LabelOptions(n=60, seed=0))
    after = plan_labels(
        grades, labels_for(queue, grades), options=LabelOptions(halfwidth=8)
    ).set_index("rule_id")
    assert (after["labelled"] == 30).all()
    assert (after["halfwidth"] > 0).all()
    assert (after["needed"] <= before["needed"]).all()
    assert (after["still_needed"] == np.maximum(after["needed"] - 30, 0)).all()
    with pytest.raises(ValueError, match=r"LabelOptions\.halfwidth"):
        LabelOptions(halfwidth=0)


def test_grades_summary_with_labels_shows_the_corrected_rate_beside_the_judges() -> None:
    grades = _grades()
    queue = label_queue(grades, options=LabelOptions(n=100, seed=1))
    summary = Grades.of(grades).by_rule(labels=labels_for(queue, grades)).set_index("rule_id")
    truth = Grades.of(true_frame(grades)).summary.set_index("rule_id")["pass_rate"]
    for rule in ("tone", "resolves"):
        row = summary.loc[rule]
        assert row["correction"] == "ppi++"
        assert row["labelled"] == 50
        assert row["corrected_low"] <= truth[rule] <= row["corrected_high"]
    assert summary.loc["greets", "correction"] == "none"
    # every verdict has two labels: stratified by the judge's verdict, t at the labels' df
    assert set(summary.loc[["tone", "resolves"], "estimator"]) == {"stratified"}
    assert (summary.loc[["tone", "resolves"], "corrected_df"] < 99).all()  # not the 100 items
    one_fail = labels_for(queue, grades)
    tone_fails = one_fail.merge(grades[["conversation_id", "rule_id", "verdict"]])
    drop = tone_fails[(tone_fails["rule_id"] == "tone") & (tone_fails["verdict"] == "fail")]
    fewer = one_fail.drop(index=drop.index[1:])  # one label left on the judge's tone fails
    table = Grades.of(grades).by_rule(labels=fewer).set_index("rule_id")
    assert table.loc["tone", "estimator"] == "ppi++"
    assert table.loc["resolves", "estimator"] == "stratified"
    assert "deterministic" in summary.loc["greets", "correction_reason"]
    few = Grades.of(grades).by_rule(labels=labels_for(queue.head(6), grades))
    assert set(few["correction"]) == {"none"}
    assert few["correction_reason"].str.contains("fewer than 10").any()


def _graded(tmp_path: Path):  # type: ignore[no-untyped-def]
    run = make_run(tmp_path)
    grade_run(run, CARD, judge=FakeJudge(lambda task, rule: "pass"))
    return run


def test_labels_keep_their_probability_and_bad_ones_are_refused(tmp_path: Path) -> None:
    run = _graded(tmp_path)
    rule = "confirm"
    run.add_labels([Label("c1", rule, "pass", inclusion_probability=0.25)])
    assert run.labels()["inclusion_probability"].tolist() == [0.25]
    for bad, message in (
        (Label("c1", "no-such-rule", "pass"), "rule_id 'no-such-rule' is not a rule"),
        (Label("ghost", rule, "pass"), "conversation_id 'ghost' is not in run"),
        (Label("c1", rule, "pass", inclusion_probability=0.0), "inclusion_probability"),
        (Label("c1", rule, "pass", inclusion_probability=1.5), "inclusion_probability"),
        (Label("c1", rule, "pass", rubric_version_id="other"), "rubric_version_id 'other'"),
    ):
        with pytest.raises(ValueError, match=message):
            run.add_labels([Label("c2", rule, "pass"), bad])
    assert len(run.labels(latest=False)) == 1  # nothing more stored


def test_csv_import_keeps_the_probability_and_refuses_unknown_rules_and_bad_bytes(
    tmp_path: Path,
) -> None:
    run = _graded(tmp_path)
    store = run.path.parent
    header = "run_id,conversation_id,rule_id,label,inclusion_probability\n"
    good = header + f"{run.run_id},c1,confirm,fail,0.5\n"
    assert import_labels(io.StringIO(good), store) == {run.run_id: 1}
    assert load_run(run.path).labels()["inclusion_probability"].tolist() == [0.5]
    unknown = header + f"{run.run_id},c2,confirm,pass,0.5\n{run.run_id},c2,no-such-rule,pass,\n"
    with pytest.raises(ValueError, match="line 3: rule_id 'no-such-rule'"):
        import_labels(io.StringIO(unknown), store)
    bad_bytes = tmp_path / "bad.csv"
    bad_bytes.write_bytes(
        (header + f"{run.run_id},c2,confirm,pass,0.5\n").encode() + b"x,c3,confirm,pass,\xff\n"
    )
    with pytest.raises(ValueError, match="line 3: 'inclusion_probability' is not valid UTF-8"):
        import_labels(bad_bytes, store)
    assert len(load_run(run.path).labels(latest=False)) == 1


def test_without_n_the_queue_holds_what_plan_labels_still_needs() -> None:
    """Issue 29: the queue's default n was a fixed 50 whatever plan_labels said."""
    grades = _grades()
    plan = plan_labels(grades, options=LabelOptions(halfwidth=10))
    needed = int(plan["still_needed"].sum())
    assert needed > 50  # two judged rules, no labels yet: labels alone, about 60-90 each
    queue = label_queue(grades, options=LabelOptions(seed=3))
    assert len(queue) == needed
    assert planned_n(grades)[0] == needed
    assert (
        len(label_queue(grades, options=LabelOptions(n=12, seed=3))) == 12
    )  # an explicit n is honoured
    # labels already given count: a good judge needs far fewer more
    labels = labels_for(label_queue(grades, options=LabelOptions(n=60, seed=0)), grades)
    fewer, plan_after = planned_n(grades, labels, options=LabelOptions(halfwidth=10))
    assert fewer == int(plan_after["still_needed"].sum()) < needed
    assert len(label_queue(grades, labels, options=LabelOptions(seed=3))) == fewer
    # a wide interval the labels already give: nothing more to label
    assert label_queue(grades, labels, options=LabelOptions(halfwidth=40)).empty


def test_labels_queue_command_prints_and_writes_an_importable_csv(tmp_path: Path) -> None:
    run = _graded(tmp_path)
    store = str(run.path.parent)
    runner = CliRunner()
    shown = runner.invoke(app, ["labels", "queue", run.run_id, "--store", store, "-n", "2"])
    assert shown.exit_code == 0, shown.output
    assert "inclusion_probability" in shown.output
    sheet = tmp_path / "queue.csv"
    written = runner.invoke(
        app, ["labels", "queue", run.run_id, "--store", store, "-n", "2", "--csv", str(sheet)]
    )
    assert written.exit_code == 0, written.output
    frame = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    assert len(frame) == 2
    frame["label"] = "fail"
    frame.to_csv(sheet, index=False)
    assert runner.invoke(app, ["labels", "import", str(sheet), "--store", store]).exit_code == 0
    stored = load_run(run.path).labels()
    assert stored["inclusion_probability"].notna().all()
    assert len(stored) == 2
    # without -n: as many as plan_labels says are still needed (the stored labels counted)
    planned, _ = planned_n(load_run(run.path))
    default = runner.invoke(app, ["labels", "queue", run.run_id, "--store", store])
    assert default.exit_code == 0, default.output
    assert f"{planned} label(s): what a judge-corrected interval of ±10 points" in default.output
    assert planned > 0
    assert len(default.stdout.strip().splitlines()) == planned + 1


def test_the_label_endpoint_refuses_other_sites_unknown_rules_and_bad_bytes(
    tmp_path: Path,
) -> None:
    from evalkit.view import ViewerOptions, ViewerServer

    run = _graded(tmp_path)
    with (
        ViewerServer(ViewerOptions(store=run.path.parent, port=0)) as viewer,
        httpx.Client(timeout=120) as http,
    ):
        base = viewer.base + f"runs/{run.run_id}/"
        page = http.get(base + "c/c1.html").text
        token = page.split('name="form_token" value="', 1)[1].split('"', 1)[0]
        url = base + "c/c1/label"
        form = {"form_token": token, "rule_id": "confirm", "label": "fail"}
        refused = http.post(url, data=form, headers={"sec-fetch-site": "cross-site"})
        assert refused.status_code == 403
        refused = http.post(url, data=form, headers={"origin": "https://evil.example"})
        assert refused.status_code == 403
        unknown = http.post(url, data={**form, "rule_id": "no-such-rule"})
        assert unknown.status_code == 400
        assert "no-such-rule" in unknown.text
        raw = f"form_token={token}&rule_id=confirm&label=fail&note=%FF%FE".encode()
        bad = http.post(
            url, content=raw, headers={"content-type": "application/x-www-form-urlencoded"}
        )
        assert bad.status_code == 400
        assert "note: not valid UTF-8" in bad.text
        assert load_run(run.path).labels().empty
        ok = http.post(
            url, data=form, headers={"sec-fetch-site": "same-origin"}, follow_redirects=False
        )
        assert ok.status_code == 303
    assert len(load_run(run.path).labels()) == 1
