"""A score without its judge: with a judge that never answers, grading ends within one
deadline, the headline names the rules and points the score leaves out, no comparison rests
a verdict on it, and ``evalkit grade --fail-on error`` fails (the demo's run on the emulator;
the judge is a loopback server that accepts and never answers).

Wall time is bounded by deadlines: a judge that never answers used to cost two of them (the
first wave, then a probe), so grading within ``2 * DEADLINE`` with exactly one wave of calls
shows the first deadline already told that the judge is down.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.compare import compare_grades
from evalkit.demo import DemoService, demo_grid, demo_scorecard
from evalkit.flows import compare_runs
from evalkit.grading import GradeOptions, Grades, Judge, JudgeOptions, Scorecard, grade_run
from evalkit.store import Run

from .hostile_judge import HostileJudge

DEADLINE = 6.0
CONCURRENCY = 8
JUDGED = Scorecard.load(demo_scorecard()).judged_rules
JUDGED_IDS = sorted(r.rule_id for r in JUDGED)
JUDGED_POINTS = sum(r.points for r in JUDGED)
NO_SAVE = GradeOptions(save=False)


@dataclass
class Graded:
    runs: tuple[Run, Run]  # prod, draft
    working: tuple[Grades, Grades]  # graded by the emulator's judge
    silent: Grades  # the draft graded by a judge that never answers
    seconds: float
    calls: int
    connections: int


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    store = tmp_path_factory.mktemp("runs")
    with DemoService(store, seed=5) as svc:
        runs = (svc.run(demo_grid(2), target="prod"), svc.run(demo_grid(2), target="draft"))
        working = (
            grade_run(runs[0], demo_scorecard(), judge=svc.judge, options=NO_SAVE),
            grade_run(runs[1], demo_scorecard(), judge=svc.judge, options=NO_SAVE),
        )
    hostile = HostileJudge("silent")
    with hostile.serve() as url:
        # a model name of its own: the emulator judge's cached verdicts are not this judge's
        judge = Judge(
            "never-answers", url, options=JudgeOptions(timeout=DEADLINE, concurrency=CONCURRENCY)
        )
        started = time.monotonic()
        silent = grade_run(runs[1], demo_scorecard(), judge=judge, options=NO_SAVE)
        seconds = time.monotonic() - started
        connections = len(hostile.connections)
    return Graded(runs, working, silent, seconds, judge.stats.calls, connections)


def refused_port() -> str:
    """A loopback URL where nothing listens (a judge that is not there at all)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@pytest.mark.slow
def test_a_judge_that_never_answers_costs_one_deadline(graded: Graded) -> None:
    conversations = graded.silent.n_conversations
    assert conversations > CONCURRENCY  # some tasks never got to call
    # one wave of calls, each missing the deadline together; nobody waits out a second one
    assert graded.calls == graded.connections == CONCURRENCY
    assert graded.seconds < 2 * DEADLINE, graded.seconds
    judged = graded.silent.frame[graded.silent.frame["rule_id"].isin(JUDGED_IDS)]
    assert set(judged["verdict"]) == {"error"}
    not_asked = judged["rationale"].str.contains("was not asked").sum()
    assert not_asked == (conversations - CONCURRENCY) * len(JUDGED_IDS)


@pytest.mark.slow
def test_the_headline_names_the_rules_and_points_the_score_leaves_out(graded: Graded) -> None:
    silent, working = graded.silent, graded.working[1]
    assert [r.rule_id for r in silent.rules_left_out] == JUDGED_IDS
    assert working.rules_left_out == []
    headline = silent.headline()
    assert f"without {', '.join(JUDGED_IDS)} ({JUDGED_POINTS:g} of 100 points" in headline
    assert "not the scorecard's score" in headline
    assert "not the scorecard's score" not in working.headline()
    # the number itself is the deterministic rules' score, higher than the scorecard's
    assert silent.mean_score > working.mean_score
    assert silent.to_dict()["rules_left_out"][0]["rule_id"] == JUDGED_IDS[0]


@pytest.mark.slow
def test_no_verdict_rests_on_a_score_without_its_judge(graded: Graded) -> None:
    prod, draft = graded.working
    fair = compare_grades(prod, draft)
    assert "leave out whole rules" not in fair.reason
    refused = compare_grades(prod, graded.silent)
    assert refused.verdict == "insufficient_evidence"
    assert not refused.non_inferior
    assert "leave out whole rules" in refused.reason
    assert all(rule in refused.reason for rule in JUDGED_IDS)
    assert f"{JUDGED_POINTS:g} of 100 points" in refused.reason
    row = refused.summary.iloc[0]
    assert row["rules_left_out_candidate"] == ", ".join(JUDGED_IDS)
    assert row["rules_left_out_baseline"] == ""
    assert row["points_left_out_candidate"] == JUDGED_POINTS
    assert refused.reason in refused.headline()
    assert any("leave out whole rules" in w for w in refused.warnings)
    assert set(refused.by_persona["direction"]) == {"insufficient_evidence"}
    # both sides without their judge: the same rules out on both, still not the scorecard's
    both = compare_grades(graded.silent, graded.silent)
    assert both.verdict == "insufficient_evidence"
    assert "baseline: " in both.reason
    assert "candidate: " in both.reason


@pytest.mark.slow
def test_a_flow_refuses_the_verdict_too(graded: Graded) -> None:
    """compare_runs grades both runs again with a judge that refuses connections (fast)."""
    judge = Judge("not-there", refused_port(), options=JudgeOptions(max_attempts=1))
    comparison = compare_runs(*graded.runs, demo_scorecard(), judge=judge)
    assert comparison.verdict == "insufficient_evidence"
    assert "leave out whole rules" in comparison.reason


@pytest.mark.slow
def test_grade_fail_on_error_catches_it(graded: Graded, monkeypatch: pytest.MonkeyPatch) -> None:
    run = graded.runs[1]
    monkeypatch.setenv("EVALKIT_JUDGE_MODEL", "not-there")
    monkeypatch.setenv("EVALKIT_JUDGE_BASE_URL", refused_port())
    args = ["grade", run.run_id, "--store", str(Path(run.path).parent), "-s", str(demo_scorecard())]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 0, plain.output  # no gate asked for
    assert "not the scorecard's score" in plain.output
    gated = CliRunner().invoke(app, [*args, "--fail-on", "error"])
    assert gated.exit_code == 5, gated.output
    assert "--fail-on: the grades hold" in gated.output
    assert "error" in gated.output.splitlines()[-1]
    wrong = CliRunner().invoke(app, [*args, "--fail-on", "errors"])
    assert wrong.exit_code == 2
    assert "choose from fail, na, error" in wrong.output
