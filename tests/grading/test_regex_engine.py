"""Hostile regex rules: what validation accepts grades, in linear time or under a time limit.

Rows 1 and 2 of README's "Hostile inputs" table: a capturing group used to pass validation and
crash `evalkit grade`; a catastrophic backtracking pattern used to run with no time limit.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.grading import Scorecard, ScorecardError, grade_transcripts
from evalkit.grading._checks import _out_of_time
from evalkit.grading._regex import GIVE_UP_AFTER, TIME_LIMIT_S, pattern_problem, re2_form, uncapture
from evalkit.store import ConversationRecord, RunWriter, TurnRecord, identity_hash, load_run

from .helpers import turns_frame

runner = CliRunner()
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def card(*checks: dict[str, Any]) -> Scorecard:
    """A scorecard of one regex rule per check (points split evenly, totalling 100)."""
    points = [100 // len(checks)] * len(checks)
    points[0] += 100 - sum(points)
    rules = [
        {"ruleId": f"r{i}", "title": f"rule {i}", "points": p, "check": {"type": "regex", **c}}
        for i, (c, p) in enumerate(zip(checks, points, strict=True))
    ]
    return Scorecard.from_dict({"rubricVersionId": "hostile-regex", "rules": rules})


def graded(scorecard: Scorecard, convs: dict[str, Any]) -> pd.DataFrame:
    frame = grade_transcripts(turns_frame(convs), scorecard, judge=False).frame
    return frame.set_index(["rule_id", "conversation_id"])


# --------------------------------------------------------------------------- capturing groups


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("(haan|nahin)", "(?:haan|nahin)"),
        (r"(ji (haan|nahin))", r"(?:ji (?:haan|nahin))"),
        (r"(?P<m>haan)", "(?:haan)"),
        (r"(?<answer>haan)", "(?:haan)"),
        (r"\((haan)\)", r"\((?:haan)\)"),
        (r"[(](haan)[)]", r"[(](?:haan)[)]"),
        (r"[]()](x)", r"[]()](?:x)"),
        (r"[^](](x)", r"[^](](?:x)"),
        (r"[[:alpha:]](x)", r"[[:alpha:]](?:x)"),
        (r"\Q(\E(x)", r"\Q(\E(?:x)"),
        (r"(?i)(x)(?:y)(?=z)(?<!w)", r"(?i)(?:x)(?:y)(?=z)(?<!w)"),
    ],
)
def test_capturing_groups_become_non_capturing_and_nothing_else_changes(
    pattern: str, expected: str
) -> None:
    assert uncapture(pattern) == expected


def test_a_capturing_group_grades_on_re2_with_the_whole_match_reported() -> None:
    scorecard = card(
        {"pattern": "(haan|nahin)", "speaker": "caller"},
        {"pattern": r"(?P<m>\d+) (baje|bajay)", "speaker": "agent"},
    )
    assert all(re2_form(r.check.pattern, True) for r in scorecard.rules)  # type: ignore[union-attr]
    out = graded(
        scorecard,
        {
            "a": [("agent", "Kal 5 baje aayen?"), ("caller", "Ji HAAN, theek hai")],
            "b": [("agent", "Kal aayen?"), ("caller", "pata nahi")],
        },
    )
    assert out.loc[("r0", "a"), "verdict"] == "pass"
    assert out.loc[("r0", "a"), "rationale"] == "caller turn 2 matches /(haan|nahin)/ ('HAAN')"
    assert out.loc[("r0", "b"), "verdict"] == "fail"
    assert out.loc[("r1", "a"), "rationale"].endswith("('5 baje')")
    assert out.loc[("r1", "b"), "verdict"] == "fail"


def test_cli_validates_and_grades_a_capturing_group(tmp_path: Path) -> None:
    """The issue's reproduction: validate said valid, then `evalkit grade` exited 1."""
    store = tmp_path / "runs"
    write_run(
        store, "nightly", {f"c{i}": [("agent", "Kal aayen?"), ("caller", "haan")] for i in range(3)}
    )
    file = tmp_path / "card.yaml"
    file.write_text(
        "rubricVersionId: capture-1\nrules:\n"
        "  - ruleId: yes-no\n    title: The caller answers yes or no\n    points: 100\n"
        "    check: {type: regex, pattern: '(haan|nahin)', speaker: caller}\n",
        encoding="utf-8",
    )
    valid = runner.invoke(app, ["scorecard", "validate", str(file)])
    assert valid.exit_code == 0, valid.output
    result = runner.invoke(app, ["grade", "nightly", "--store", str(store), "-s", str(file)])
    assert result.exit_code == 0, result.output
    assert "yes-no" in result.output
    assert "100%" in result.output


# --------------------------------------------------------------------------- validation


def test_validation_refuses_what_no_engine_compiles_naming_the_rule() -> None:
    with pytest.raises(ScorecardError) as err:
        card({"pattern": "ok"}, {"pattern": "(haan"}, {"pattern": "a{2,1}"})
    text = str(err.value)
    assert "rules[1] (r1).check.pattern: invalid regex '(haan'" in text
    assert "rules[2] (r2).check.pattern: invalid regex 'a{2,1}'" in text


@pytest.mark.parametrize(
    "pattern",
    [r"(?<!un)paid", r"(\w+) \1", r"(?>a+)b", r"\p{Arabic}+", r"(?=.*haan)ji", "(?P<m>x)"],
)
def test_validation_accepts_what_one_engine_runs(pattern: str) -> None:
    assert pattern_problem(pattern) is None
    card({"pattern": pattern})


def test_backreferences_and_lookarounds_still_grade() -> None:
    out = graded(
        card({"pattern": r"(?<!un)paid"}, {"pattern": r"\b(\w+) \1\b", "expect": "no_match"}),
        {"a": [("agent", "it is unpaid")], "b": [("agent", "it is paid paid")]},
    )
    assert out.loc[("r0", "a"), "verdict"] == "fail"
    assert out.loc[("r0", "b"), "verdict"] == "pass"
    assert out.loc[("r1", "a"), "verdict"] == "pass"
    assert out.loc[("r1", "b"), "verdict"] == "fail"
    assert "('paid paid')" in out.loc[("r1", "b"), "rationale"]


# --------------------------------------------------------------------------- catastrophic patterns


@pytest.mark.slow
def test_catastrophic_patterns_on_long_inputs_end_in_error_within_seconds() -> None:
    """170 conversations, each with its own 20,000-character turns: Python's re never returned
    on the first pattern. Each rule stops searching after a few searches ran out of time."""
    convs = {
        f"c{i:03d}": [("agent", "a" * 20_000 + f"! {i}"), ("caller", "x" * 20_000 + f" {i}")]
        for i in range(170)
    }
    convs["0-short"] = [("agent", "aaa")]  # searched first: decided
    scorecard = card(
        {"pattern": r"(a+)+(?=$)", "mode": "any"},
        {"pattern": r"^(\S+\s?)+(?=ZZZ)", "mode": "none"},
        {"pattern": r"(a+)+(?=$)", "mode": "all", "speaker": "agent"},
    )
    started = time.monotonic()
    out = graded(scorecard, convs)
    elapsed = time.monotonic() - started
    # a deadline, not a performance figure: 3 rules x GIVE_UP_AFTER searches of TIME_LIMIT_S
    # CPU seconds, on a machine shared by other jobs, plus grading
    assert elapsed < 3 * GIVE_UP_AFTER * TIME_LIMIT_S * 4 + 10
    for rule in ("r0", "r1", "r2"):
        verdicts = out.loc[rule]["verdict"]
        assert (verdicts.drop("0-short") == "error").all(), verdicts.value_counts()
        reasons = out.loc[rule]["rationale"].drop("0-short")
        ran_out = reasons.str.contains(f"ran out of its {TIME_LIMIT_S:g} s time limit by")
        assert 1 <= ran_out.sum() <= GIVE_UP_AFTER
        assert reasons[~ran_out].str.contains("was not searched").all()
    # "aaa" matches, and has no ZZZ: decided in time by every rule
    assert out.loc[("r0", "0-short"), "verdict"] == "pass"
    assert out.loc[("r1", "0-short"), "verdict"] == "pass"
    assert out.loc[("r2", "0-short"), "verdict"] == "pass"


def test_a_match_before_the_slow_turn_decides_the_conversation() -> None:
    slow = "a" * 20_000 + "!"
    out = graded(
        card({"pattern": r"(a+)+(?=$)|(?<=ji )haan"}),
        {"early": [("caller", "ji haan"), ("agent", slow)], "late": [("agent", slow + " 2")]},
    )
    assert out.loc[("r0", "early"), "verdict"] == "pass"
    assert out.loc[("r0", "late"), "verdict"] == "error"
    assert out.loc[("r0", "late"), "evidence_turn"] == 1


def test_time_adds_up_over_a_transcript_until_the_deciding_turn() -> None:
    """Per transcript: the search time of its turns adds up to the turn that decides it."""
    sub = pd.DataFrame(
        {
            "conversation_id": ["a", "a", "a", "b", "b", "c"],
            "index": [1, 2, 3, 1, 2, 1],
            "role": ["agent"] * 6,
            "_pos": [0, 0, 0, 1, 1, 2],
        }
    )
    half = TIME_LIMIT_S / 2 + 0.01
    seconds = np.array([half, half, 0.0, half, 0.0, 0.0])
    unknown = np.array([False, False, False, False, False, True])
    decisive = np.array([False, False, True, True, False, False])
    late = _out_of_time(sub, decisive, unknown, seconds)
    # a: over the limit at turn 2, before its deciding turn 3; b: decided at turn 1 in time;
    # c: its only turn was never decided
    assert late.index.tolist() == ["a", "c"]
    assert late["index"].tolist() == [2, 1]


# --------------------------------------------------------------------------- helpers


def write_run(store: Path, run_id: str, convs: dict[str, list[tuple[str, str]]]) -> None:
    manifest = {"identity": identity_hash({"grid": run_id}), "assistant_id": "asst_1"}
    writer = RunWriter.create(store, run_id, manifest, fsync=False)
    for n, (cid, lines) in enumerate(convs.items()):
        turns = [TurnRecord(i, role, text) for i, (role, text) in enumerate(lines, 1)]
        writer.append(
            ConversationRecord(
                run_id=run_id,
                conversation_id=cid,
                cell_id=f"cell-{n}",
                repeat=0,
                persona_label="busy",
                variables="{}",
                status="done",
                n_turns=len(turns),
                started_at=T0,
                finished_at=T0,
                target="draft",
            ),
            turns,
        )
    writer.finalize()
    assert len(load_run(run_id, store=store).conversations) == len(convs)
