"""grade_run / grade_transcripts end to end: rows, scores, judge paths, storage, agreement."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalkit.grading import (
    AgreementOptions,
    GradeOptions,
    GradingError,
    JudgeTask,
    Scorecard,
    grade_run,
    grade_transcripts,
    judge_agreement,
)
from evalkit.store import (
    GRADES_SCHEMA,
    ConversationRecord,
    RunWriter,
    TurnRecord,
    identity_hash,
    load_run,
)

from .helpers import FakeJudge, turns_frame

CARD = {
    "rubricVersionId": "demo/v1",
    "rules": [
        {"ruleId": "first", "title": "Agent first", "points": 20, "check": {"type": "agent_speaks_first"}},
        {"ruleId": "thanks", "title": "Thanks", "points": 30,
         "check": {"type": "contains", "any": ["shukriya"], "skip_personas": ["rude"]}},
        {"ruleId": "confirm", "title": "Confirms", "points": 50,
         "check": {"type": "judge", "criterion": "asks for a yes or no"}},
    ],
}  # fmt: skip
CONVS = {
    "c1": [("agent", "Salam, shukriya"), ("caller", "ji")],
    "c2": [("caller", "hello?"), ("agent", "Salam")],
    "c3": [("agent", "Salam"), ("caller", "bye")],
}
PERSONAS = {"c1": "nice", "c2": "nice", "c3": "rude"}


def make_run(store: Path, statuses: dict[str, str] | None = None) -> Any:
    statuses = statuses or {}
    manifest = {"identity": identity_hash({"t": 1}), "assistant_id": "a"}
    now = datetime(2026, 11, 1, tzinfo=UTC)
    with RunWriter.create(store, "r1", manifest, fsync=False) as writer:
        for i, (cid, turns) in enumerate(CONVS.items()):
            status = statuses.get(cid, "done")
            records = [TurnRecord(j, role, text) for j, (role, text) in enumerate(turns, 1)]
            record = ConversationRecord(
                run_id="r1", conversation_id=cid, cell_id=f"cell{i}", repeat=i,
                persona_label=PERSONAS[cid], variables=json.dumps({"name": "x"}),
                status=status,  # type: ignore[arg-type]
                n_turns=len(records), started_at=now, finished_at=now, target="draft",
            )  # fmt: skip
            writer.append(record, records)
        return writer.finalize()


def judge_confirm_pass_on_c1(task: JudgeTask, rule_id: str) -> str:
    return "pass" if task.conversation_id == "c1" else "fail"


def test_grade_run_rows_scores_and_storage(tmp_path: Path) -> None:
    run = make_run(tmp_path, {"c3": "error"})
    judge = FakeJudge(judge_confirm_pass_on_c1)
    grades = grade_run(run, CARD, judge=judge)
    f = grades.frame
    assert list(f.columns) == GRADES_SCHEMA.names
    assert len(f) == 2 * 3  # only done conversations, one row per rule
    assert set(f["conversation_id"]) == {"c1", "c2"}
    assert list(f["rule_id"][:3]) == ["first", "thanks", "confirm"]
    row = f.set_index(["conversation_id", "rule_id"])
    assert row.loc[("c1", "confirm"), "grader"] == "judge:fake-judge"
    assert row.loc[("c1", "first"), "grader"] == "check:agent_speaks_first"
    assert row.loc[("c2", "confirm"), "points_awarded"] == 0
    assert row.loc[("c1", "confirm"), "prompt_tokens"] == 10
    assert row.loc[("c1", "first"), "cell_id"] == "cell0"
    scores = grades.scores.set_index("conversation_id")
    assert scores.loc["c1", "score"] == 100
    assert bool(scores.loc["c1", "passed_all"])
    assert scores.loc["c2", "score"] == 0
    assert len(judge.calls) == 2
    stored = run.grades("demo/v1")
    pd.testing.assert_frame_equal(stored, f)
    assert grades.path == run.path / "grades" / "demo_v1.parquet"
    assert "demo/v1" in repr(grades)
    # re-grading replaces the rubric's file; a fresh load reads the same rows back
    grade_run(load_run(run.path), CARD, judge=False)
    again = load_run(run.path).grades("demo/v1")
    assert len(again) == 6
    assert (again[again["rule_id"] == "confirm"]["verdict"] == "na").all()
    assert list((run.path / "grades").glob("*.parquet")) == [grades.path]


def test_scores_leave_na_and_error_out_and_count_them() -> None:
    judge = FakeJudge(lambda task, rid: "error" if task.conversation_id == "c2" else "pass")
    conv = pd.DataFrame({"conversation_id": list(CONVS), "persona_label": list(PERSONAS.values())})
    grades = grade_transcripts(turns_frame(CONVS), CARD, judge=judge, conversations=conv)
    s = grades.scores.set_index("conversation_id")
    # c3 (rude): thanks is na -> applicable 70, first passes (20) + confirm passes (50)
    assert s.loc["c3", "applicable_points"] == 70
    assert s.loc["c3", "score"] == 100
    assert s.loc["c3", "n_na"] == 1
    # c2: first fails (20), thanks fails (30), confirm errors -> 0 of 50
    assert s.loc["c2", "n_error"] == 1
    assert s.loc["c2", "applicable_points"] == 50
    assert not s.loc["c2", "passed_all"]
    summary = grades.summary.set_index("rule_id")
    assert summary.loc["confirm", "error"] == 1
    assert summary.loc["thanks", "na"] == 1
    assert summary.loc["first", "pass_rate"] == pytest.approx(2 / 3)


def test_no_judge_configured_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_JUDGE_MODEL", raising=False)
    monkeypatch.delenv("EVALKIT_JUDGE_BASE_URL", raising=False)
    with pytest.raises(GradingError) as info:
        grade_transcripts(turns_frame(CONVS), CARD)
    text = str(info.value)
    for hint in (
        "EVALKIT_JUDGE_MODEL",
        "EVALKIT_JUDGE_BASE_URL",
        "judge=Judge(",
        "judge=False",
        "confirm",
    ):
        assert hint in text
    deterministic = {**CARD, "rules": [{**CARD["rules"][0], "points": 100}]}
    assert len(grade_transcripts(turns_frame(CONVS), deterministic).frame) == 3


def test_judge_false_leaves_judged_rules_not_judged() -> None:
    f = grade_transcripts(turns_frame(CONVS), CARD, judge=False).frame
    judged = f[f["rule_id"] == "confirm"]
    assert (judged["verdict"] == "na").all()
    assert (judged["rationale"] == "not judged").all()
    assert f["run_id"].eq("transcripts").all()


def test_judge_samples_majority_agreement_and_stability(tmp_path: Path) -> None:
    def noisy(task: JudgeTask, rule_id: str) -> str:
        # c1: pass, pass, fail -> pass, 2/3; c2: fail, pass, fail... ties impossible with k=3
        table = {"c1": ["pass", "pass", "fail"], "c2": ["fail", "fail", "fail"]}
        return table.get(task.conversation_id, ["pass", "fail", "na"])[task.sample]

    run = make_run(tmp_path)
    grades = grade_run(run, CARD, judge=FakeJudge(noisy), options=GradeOptions(judge_samples=3))
    row = grades.frame.set_index(["conversation_id", "rule_id"])
    assert row.loc[("c1", "confirm"), "verdict"] == "pass"
    assert row.loc[("c1", "confirm"), "judge_agreement"] == pytest.approx(2 / 3)
    assert row.loc[("c1", "confirm"), "judge_samples"] == 3
    assert row.loc[("c1", "confirm"), "prompt_tokens"] == 30
    assert row.loc[("c2", "confirm"), "judge_agreement"] == 1
    # c3: pass / fail / na, all tied -> the first sample's verdict
    assert row.loc[("c3", "confirm"), "verdict"] == "pass"
    stability = grades.judge_stability().set_index("rule_id")
    assert stability.loc["confirm", "n"] == 3
    assert stability.loc["confirm", "agreement"] == pytest.approx((2 / 3 + 1 + 1 / 3) / 3)
    assert bool(stability.loc["confirm", "unstable"])


class CachingJudge(FakeJudge):
    cache_dir: Path | None = None

    def with_cache_dir(self, path: Path) -> CachingJudge:
        other = CachingJudge(self.decide)
        other.cache_dir = path
        return other


def test_grade_run_hands_the_store_cache_to_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    original = CachingJudge.ajudge

    async def spy(self: CachingJudge, tasks: Any) -> Any:
        seen.append(self.cache_dir)
        return await original(self, tasks)

    monkeypatch.setattr(CachingJudge, "ajudge", spy)
    grade_run(make_run(tmp_path), CARD, judge=CachingJudge(judge_confirm_pass_on_c1))
    assert seen == [tmp_path / ".judge-cache"]


def test_grade_run_inside_a_running_event_loop(tmp_path: Path) -> None:
    run = make_run(tmp_path)

    async def notebook_cell() -> int:
        return len(grade_run(run, CARD, judge=False).frame)

    assert asyncio.run(notebook_cell()) == 9


def test_transcript_without_conversations_frame_and_empty_conversation() -> None:
    conv = pd.DataFrame({"conversation_id": ["c1", "silent"]})
    f = grade_transcripts(turns_frame(CONVS), CARD, judge=FakeJudge(judge_confirm_pass_on_c1),
                          conversations=conv).frame  # fmt: skip
    row = f.set_index(["conversation_id", "rule_id"])
    assert row.loc[("silent", "first"), "verdict"] == "na"
    assert row.loc[("silent", "confirm"), "rationale"] == "no transcript to judge"
    assert len(f) == 6


def test_judge_agreement_accuracy_kappa_and_left_out() -> None:
    rng = np.random.default_rng(1)
    n = 200
    truth = rng.choice(["pass", "fail"], size=n)
    flipped = np.where(rng.random(n) < 0.1, np.where(truth == "pass", "fail", "pass"), truth)
    grades = pd.DataFrame({"conversation_id": [f"c{i}" for i in range(n)], "rule_id": "r",
                           "verdict": flipped})  # fmt: skip
    grades.loc[0, "verdict"] = "error"
    labels = pd.DataFrame({"conversation_id": [f"c{i}" for i in range(n)] + ["ghost"],
                           "rule_id": "r", "verdict": [*truth, "pass"]})  # fmt: skip
    out = judge_agreement(grades, labels, options=AgreementOptions(seed=3)).set_index("rule_id")
    r = out.loc["r"]
    assert r["n"] == n - 1
    assert r["n_left_out"] == 2
    expected = float((flipped[1:] == truth[1:]).mean())
    assert r["accuracy"] == pytest.approx(expected)
    assert r["accuracy_low"] < expected < r["accuracy_high"]
    assert 0.6 < r["kappa"] < 0.95
    assert r["kappa_low"] < r["kappa"] < r["kappa_high"]
    again = judge_agreement(grades, labels, options=AgreementOptions(seed=3)).set_index("rule_id")
    assert again.loc["r", "kappa_low"] == r["kappa_low"]  # seeded
    assert "(all)" in out.index


def test_wilson_interval_known_values() -> None:
    from evalkit.grading._agreement import wilson_interval

    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert all(np.isnan(wilson_interval(0, 0)))


def test_stored_grades_schema_is_exact(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    grade_run(run, CARD, judge=False)
    import pyarrow.parquet as pq

    table = pq.read_table(run.path / "grades" / "demo_v1.parquet")
    stored = [(f.name, str(f.type), f.nullable) for f in table.schema]
    declared = [(f.name, str(f.type), f.nullable) for f in GRADES_SCHEMA]
    assert stored == declared  # names, order, types and nullability, field by field
    assert table.schema.remove_metadata().equals(GRADES_SCHEMA)
    # the columns DESIGN.md promises, with the types a reader relies on
    promised = {
        "run_id": pa.large_string(),
        "conversation_id": pa.large_string(),
        "cell_id": pa.large_string(),
        "persona_label": pa.large_string(),
        "repeat": pa.int64(),
        "rubric_version_id": pa.large_string(),
        "rule_id": pa.large_string(),
        "title": pa.large_string(),
        "points": pa.float64(),
        "verdict": pa.large_string(),
        "points_awarded": pa.float64(),
        "rationale": pa.large_string(),
        "evidence_turn": pa.int64(),
        "grader": pa.large_string(),
    }
    assert {name: table.schema.field(name).type for name in promised} == promised
    assert table.schema.metadata[b"evalkit.rubric_version_id"] == b"demo/v1"
    assert isinstance(table, pa.Table)
    assert os.path.exists(run.path.parent / ".rubrics.json")
    assert Scorecard.from_dict(CARD).content_hash in (run.path.parent / ".rubrics.json").read_text()
