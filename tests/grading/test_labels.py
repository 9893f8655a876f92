"""Hand labels stored in a run: append-only, apart from grades, surviving re-grading; the
judge's agreement with them (accuracy, F1 of fail, kappa, with intervals); CSV in and out."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.grading import AgreementOptions, grade_run, judge_agreement
from evalkit.store import LABEL_COLUMNS, Label, export_labels, import_labels, load_run

from .helpers import FakeJudge
from .test_grade import CARD, make_run


def _graded(tmp_path: Path, fail_on: set[str]):  # type: ignore[no-untyped-def]
    run = make_run(tmp_path)
    judge = FakeJudge(lambda task, rule: "fail" if task.conversation_id in fail_on else "pass")
    grade_run(run, CARD, judge=judge)
    return run


def test_labels_are_append_only_kept_apart_from_grades_and_survive_regrading(
    tmp_path: Path,
) -> None:
    run = _graded(tmp_path, {"c2"})
    run.add_labels([Label("c1", "confirm", "pass", labelled_by="ana")])
    run.add_labels(
        [{"conversation_id": "c2", "rule_id": "confirm", "label": "pass", "note": "it did ask"}]
    )
    run.add_labels([Label("c1", "confirm", "fail", note="changed my mind", labelled_by="ana")])
    objects = sorted((run.path / "labels").glob("*.jsonl"))
    assert len(objects) == 3  # one object per batch, none rewritten
    history = run.labels(latest=False)
    assert list(history.columns) == list(LABEL_COLUMNS)
    assert len(history) == 3
    latest = run.labels().set_index(["conversation_id", "rule_id"])
    assert latest.loc[("c1", "confirm"), "label"] == "fail"  # the later label wins
    assert latest.loc[("c2", "confirm"), "labelled_by"]  # filled in
    grades_before = run.grades()
    assert "label" not in grades_before.columns
    # re-grading with another judge replaces the grades and leaves the labels alone
    before = {p.name: p.read_bytes() for p in objects}
    grade_run(load_run(run.path), CARD, judge=FakeJudge(lambda task, rule: "fail", model="judge-2"))
    again = load_run(run.path)
    assert {p.name: p.read_bytes() for p in (run.path / "labels").glob("*.jsonl")} == before
    agreement = judge_agreement(again).set_index("rule_id")
    # now the judge says fail on c1, c2 and c3; labels: c1 fail (agree), c2 pass (disagree)
    assert agreement.loc["confirm", "n"] == 2
    assert agreement.loc["confirm", "agree"] == 1


def test_a_bad_label_names_its_field_and_stores_nothing(tmp_path: Path) -> None:
    run = _graded(tmp_path, set())
    with pytest.raises(ValueError, match=r"label 1: label must be one of pass, fail, na"):
        run.add_labels([Label("c1", "confirm", "pass"), Label("c2", "confirm", "maybe")])
    with pytest.raises(ValueError, match=r"conversation_id 'ghost' is not in run r1"):
        run.add_labels([Label("ghost", "confirm", "pass")])
    with pytest.raises(ValueError, match="rule_id must be a non-empty string"):
        run.add_labels([Label("c1", " ", "pass")])
    assert not (run.path / "labels").exists() or not list((run.path / "labels").iterdir())
    assert run.labels().empty


def test_agreement_reports_f1_of_fail_and_kappa_with_intervals_from_stored_labels(
    tmp_path: Path,
) -> None:
    # judge: fail on c1, c2; pass on c3.  labels (truth): c1 fail, c2 pass, c3 fail.
    run = _graded(tmp_path, {"c1", "c2"})
    run.add_labels(
        [
            Label("c1", "confirm", "fail"),
            Label("c2", "confirm", "pass"),
            Label("c3", "confirm", "fail"),
            Label("c1", "first", "pass"),
        ]
    )
    out = judge_agreement(run, options=AgreementOptions(seed=1)).set_index("rule_id")
    confirm = out.loc["confirm"]
    # TP = 1 (c1), FP = 1 (c2), FN = 1 (c3): F1 = 2 / (2 + 1 + 1)
    assert confirm["f1_fail"] == pytest.approx(0.5)
    assert confirm["accuracy"] == pytest.approx(1 / 3)
    assert confirm["n_labelled"] == 3
    assert 0.0 <= confirm["f1_fail_low"] <= confirm["f1_fail"] <= confirm["f1_fail_high"] <= 1.0
    assert confirm["kappa_low"] <= confirm["kappa"] <= confirm["kappa_high"]
    assert out.loc["(all)", "n_labelled"] == 4
    # grades + labels given explicitly: the same numbers
    explicit = judge_agreement(
        run.grades(), run.labels(), options=AgreementOptions(seed=1)
    ).set_index("rule_id")
    assert explicit.loc["confirm", "f1_fail"] == pytest.approx(0.5)
    with pytest.raises(TypeError, match="labels="):
        judge_agreement(run.grades())


def test_f1_interval_covers_the_true_f1_near_its_nominal_rate() -> None:
    """Calibration with our own generator: a judge that flips each label with probability
    0.15 on 120 labelled transcripts (30% fail). The 95% bootstrap interval of F1(fail) must
    cover the population F1 in at least 88% of 200 trials (the percentile bootstrap of a ratio
    runs a little under nominal; 88% is below the 1% binomial quantile of 200 trials at 93%)."""
    rng = np.random.default_rng(2026)
    n, flip, trials = 120, 0.15, 200
    p_fail = 0.3
    tp = p_fail * (1 - flip)
    fp = (1 - p_fail) * flip
    fn = p_fail * flip
    true_f1 = 2 * tp / (2 * tp + fp + fn)
    covered = 0
    for trial in range(trials):
        truth = np.where(rng.random(n) < p_fail, "fail", "pass")
        flipped = rng.random(n) < flip
        judged = np.where(flipped, np.where(truth == "fail", "pass", "fail"), truth)
        ids = [f"c{i}" for i in range(n)]
        grades = pd.DataFrame({"conversation_id": ids, "rule_id": "r", "verdict": judged})
        labels = pd.DataFrame({"conversation_id": ids, "rule_id": "r", "label": truth})
        row = judge_agreement(
            grades, labels, options=AgreementOptions(n_resamples=400, seed=trial)
        ).iloc[0]
        covered += int(row["f1_fail_low"] <= true_f1 <= row["f1_fail_high"])
    assert covered / trials >= 0.88, covered


def test_csv_export_then_import_into_a_copy_and_twice_adds_nothing(tmp_path: Path) -> None:
    run = _graded(tmp_path / "a", {"c1"})
    run.add_labels([Label("c1", "confirm", "pass", note="judge, listen again", labelled_by="b")])
    run.add_labels([Label("c3", "thanks", "na", labelled_by="b")])
    text = export_labels(tmp_path / "a", tmp_path / "labels.csv")
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame.columns) == ["run_id", *LABEL_COLUMNS]
    assert len(frame) == 2
    other = _graded(tmp_path / "b", {"c1"})
    assert import_labels(tmp_path / "labels.csv", tmp_path / "b") == {"r1": 2}
    assert import_labels(tmp_path / "labels.csv", tmp_path / "b") == {"r1": 0}
    copied = other.labels().sort_values("rule_id").reset_index(drop=True)
    original = run.labels().sort_values("rule_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(copied, original)


def test_csv_import_with_a_bad_row_names_the_line_and_stores_nothing(tmp_path: Path) -> None:
    run = _graded(tmp_path, set())
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "run_id,conversation_id,rule_id,label\nr1,c1,confirm,pass\nr1,c2,confirm,wrong\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="labels CSV line 3: label must be one of"):
        import_labels(bad, tmp_path)
    assert run.labels().empty
    for rows, message in (
        ("r1,c1,confirm,pass\nr1,ghost,confirm,fail\n", "line 3: conversation_id 'ghost' is not"),
        ("r1,c1,confirm,pass\nr9,c1,confirm,fail\n", "labels CSV line 3: run_id 'r9': no run"),
    ):
        bad.write_text("run_id,conversation_id,rule_id,label\n" + rows, encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            import_labels(bad, tmp_path)
    assert run.labels().empty


def test_labels_commands(tmp_path: Path) -> None:
    run = _graded(tmp_path, {"c2"})
    csv = tmp_path / "in.csv"
    csv.write_text(
        "conversation_id,rule_id,label,note\nc1,confirm,pass,\nc2,confirm,pass,asked twice\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    result = runner.invoke(
        app, ["labels", "import", str(csv), "--store", str(tmp_path), "--run", "r1"]
    )
    assert result.exit_code == 0, result.output
    assert "r1: 2 label(s) stored" in result.output
    result = runner.invoke(app, ["labels", "export", "--store", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "asked twice" in result.output
    result = runner.invoke(app, ["labels", "agreement", "r1", "--store", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "confirm" in result.output
    assert "f1_fail" in result.output
    assert len(run.labels()) == 2
    bad = runner.invoke(app, ["labels", "import", str(csv), "--store", str(tmp_path)])
    assert bad.exit_code == 1
    assert "--run" in bad.output


def test_people_labelling_at_once_all_keep_their_labels(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    run = _graded(tmp_path, set())
    people = [f"analyst-{i}" for i in range(8)]

    def label(who: str) -> None:
        load_run(run.path).add_labels(
            [Label(cid, "confirm", "pass", labelled_by=who) for cid in ("c1", "c2", "c3")]
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(label, people))
    history = run.labels(latest=False)
    assert len(history) == 24
    assert sorted(set(history["labelled_by"])) == people
    assert len(run.labels()) == 3
