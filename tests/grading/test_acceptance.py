"""Issue 9's acceptance, against the emulator over loopback: a 300-conversation run graded with
deterministic and judged rules (the emulated judge), re-graded from cache with zero judge calls,
a judge that answers 500 or garbage, and a bad scorecard."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from evalkit import load_run
from evalkit.data import personas_path
from evalkit.demo import CONTACTS, CONTEXT, DemoService, demo_scorecard
from evalkit.grading import Judge, JudgeOptions, Scorecard, ScorecardError, grade_run
from evalkit.grid import Grid, load_personas
from evalkit.runner import RunOptions

pytestmark = pytest.mark.slow


def _judge_stats(service: DemoService) -> dict[str, int]:
    response = httpx.get(
        f"{service.emulator.admin_url}/stats",
        headers={"Authorization": f"Bearer {service.emulator.api_key}"},
        timeout=10,
    )
    response.raise_for_status()
    stats: dict[str, int] = response.json()
    return stats


def test_a_300_conversation_run_grades_once_and_regrades_from_cache(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    personas = load_personas(personas_path())  # all 17 bundled personas
    grid = Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats=6)
    assert len(grid) == 306
    card = Scorecard.load(demo_scorecard())
    with DemoService(store, seed=11) as service:
        run = service.run(grid, options=RunOptions(progress=False))
        done = int((run.conversations["status"] == "done").sum())
        grades = grade_run(run, card, judge=service.judge)
        frame = grades.frame
        # exactly one row per done conversation x rule
        assert len(frame) == done * len(card.rules)
        assert not frame.duplicated(["conversation_id", "rule_id"]).any()
        judged = frame[frame["rule_id"].isin([r.rule_id for r in card.judged_rules])]
        assert (judged["grader"] == "emulated-judge:emulator-judge").all()
        assert set(judged["verdict"]) <= {"pass", "fail", "na"}
        calls = _judge_stats(service)["judgeCalls"]
        assert calls >= done  # one call per conversation (all its judged rules at once)
        # a second grading: zero judge calls, the same grades
        again = grade_run(load_run(run.run_id, store=store), card, judge=service.judge)
        assert _judge_stats(service)["judgeCalls"] == calls
        key = ["conversation_id", "rule_id"]
        left = frame.sort_values(key)[["conversation_id", "rule_id", "verdict"]]
        right = again.frame.sort_values(key)[["conversation_id", "rule_id", "verdict"]]
        assert left.reset_index(drop=True).equals(right.reset_index(drop=True))
        stored = load_run(run.run_id, store=store).grades(card.rubric_version_id)
        assert len(stored) == len(frame)


@pytest.mark.parametrize("failure", ["http-500", "garbage"])
def test_a_broken_judge_gives_error_verdicts_and_the_grading_completes(
    tmp_path: Path, failure: str
) -> None:
    store = tmp_path / "runs"
    personas = [p for p in load_personas(personas_path()) if p.label == "cooperative"]
    grid = Grid(personas, variables=CONTACTS[:2], contexts=[CONTEXT], repeats=2)
    card = Scorecard.load(demo_scorecard())
    with DemoService(store, seed=3) as service:
        run = service.run(grid, options=RunOptions(progress=False))
        if failure == "garbage":
            response = httpx.put(
                f"{service.emulator.admin_url}/judge",
                json={"malformedRate": 1.0},
                headers={"Authorization": f"Bearer {service.emulator.api_key}"},
                timeout=10,
            )
            response.raise_for_status()
            judge = Judge(
                model="emulator-judge",
                base_url=service.emulator.judge_base_url,
                cache_dir=tmp_path / "cache",
                options=JudgeOptions(max_attempts=2),
            )
        else:  # a judge endpoint that answers 500 to everything (a real path on the emulator)
            judge = Judge(
                model="emulator-judge",
                base_url=f"{service.emulator.base_url}/no-such-judge-500",
                cache_dir=tmp_path / "cache",
                options=JudgeOptions(max_attempts=2),
            )
        grades = grade_run(run, card, judge=judge)
    frame = grades.frame
    judged_ids = {r.rule_id for r in card.judged_rules}
    judged = frame[frame["rule_id"].isin(judged_ids)]
    deterministic = frame[~frame["rule_id"].isin(judged_ids)]
    assert len(frame) == len(run.conversations) * len(card.rules)
    assert (judged["verdict"] == "error").all(), judged["verdict"].value_counts()
    assert judged["rationale"].str.len().gt(0).all()
    assert "error" not in set(deterministic["verdict"])
    # errors are left out of the score and counted, never scored as fail
    assert (grades.scores["n_error"] == len(judged_ids)).all()
    assert grades.scores["score"].notna().all()


def test_a_bad_scorecard_is_rejected_with_every_problem_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rubricVersionId: broken\n"
        "rules:\n"
        "  - {ruleId: a, title: A, points: 60, check: {type: regex, pattern: '(', speaker: agent}}\n"
        "  - {ruleId: a, title: B, points: 30, check: {type: no_such_check}}\n"
        "  - {ruleId: c, title: C, points: 5, check: {type: turns, max: 'ten'}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ScorecardError) as info:
        Scorecard.load(bad)
    text = str(info.value)
    assert "total 95" in text
    assert "duplicate rule id" in text
    assert "invalid regex" in text
    assert "no_such_check" in text
    assert "rules[2] (c).check.max" in text
