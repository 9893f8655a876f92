"""Scorecard loading, validation (every problem at once), wire form, hash and rubric registry."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.api import EvalkitError, InvalidRequestError
from evalkit.grading import Scorecard, ScorecardError

REPO = Path(__file__).resolve().parents[2]
CARDS = sorted((REPO / "scorecards").glob("*.yaml"))


def rule(rid: str, points: float, check: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": rid, "title": rid.title(), "points": points}
    if check is not None:
        out["check"] = check
    return out


@pytest.mark.parametrize("path", CARDS, ids=lambda p: p.stem)
def test_bundled_scorecards_load_and_round_trip(path: Path) -> None:
    card = Scorecard.load(path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert card.rubric_version_id == data["rubricVersionId"]
    assert sum(r.points for r in card.rules) == 100
    again = Scorecard.from_dict(card.to_service())
    assert again.content_hash == card.content_hash
    service = card.to_service(with_checks=False)
    assert all(set(r) == {"ruleId", "title", "points"} for r in service["rules"])


def test_json_file_and_from_file_alias(tmp_path: Path) -> None:
    data = {"rubricVersionId": "v1", "rules": [rule("a", 100, {"type": "no_placeholders"})]}
    path = tmp_path / "card.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert Scorecard.from_file(path).rules[0].check_type == "no_placeholders"


def test_every_problem_is_reported_at_once() -> None:
    data = {
        "rubricVersionId": "v1",
        "rules": [
            rule("a", 30, {"type": "spelling"}),
            rule("a", 30, {"type": "regex", "pattern": "(("}),
            rule("c", 30, {"type": "contains", "any": ["x"], "whole_word": "yes"}),
            rule("d", 5, {"type": "uses_variable", "varible": "x"}),
        ],
    }
    with pytest.raises(ScorecardError) as info:
        Scorecard.from_dict(data)
    err = info.value
    text = str(err)
    assert isinstance(err, InvalidRequestError)
    assert isinstance(err, EvalkitError)
    assert isinstance(err, ValueError)
    assert "they total 95" in text
    assert "rules[1] (a).ruleId: duplicate rule id" in text
    assert "rules[0] (a).check.type: unknown check type 'spelling'" in text
    assert "rules[1] (a).check.pattern: invalid regex" in text
    assert "rules[2] (c).check.whole_word" in text
    assert "rules[3] (d).check.varible" in text
    assert "rules[3] (d).check.variable" in text
    assert len(err.problems) == 7


def test_no_rules_and_persona_labels() -> None:
    with pytest.raises(ScorecardError, match="needs at least one rule"):
        Scorecard.from_dict({"rubricVersionId": "v", "rules": []})
    data = {
        "rubricVersionId": "v",
        "rules": [rule("a", 100, {"type": "judge", "skip_personas": ["nobody"]})],
    }
    problems = Scorecard.problems(data, persona_labels={"cooperative"})
    assert [str(p) for p in problems] == [
        "rules[0] (a).check.skip_personas: names unknown persona 'nobody'"
    ]


def test_a_typo_names_the_unknown_key_and_the_closest_known_one(tmp_path: Path) -> None:
    file = tmp_path / "typo.yaml"
    file.write_text(
        "rubricVersionId: v\nrules:\n"
        "  - {ruleId: a, title: A, pionts: 60}\n"
        "  - {ruleId: b, title: B, points: 40, check: {type: script, script: arabic, minshare: 0.8}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ScorecardError) as caught:
        Scorecard.load(file)
    assert [str(p) for p in caught.value.problems] == [
        "rules[0] (a).pionts: unknown key 'pionts' (did you mean 'points'?)",
        "rules[0] (a).points: missing: a number >= 0",
        "rules[1] (b).check.minshare: unknown key 'minshare' (did you mean 'min_share'?)",
        "rules[1] (b).check.min_share: missing (a script check needs it)",
    ]
    assert str(file) in str(caught.value)


def test_an_unknown_key_with_no_close_one_lists_the_known_keys() -> None:
    data = {"rubricVersionId": "v", "rules": [rule("a", 100) | {"severity": "high"}], "x": 1}
    problems = [str(p) for p in Scorecard.problems(data)]
    assert problems == [
        "x: unknown key 'x' (known: rubricVersionId, rules)",
        "rules[0] (a).severity: unknown key 'severity' (known: check, points, ruleId, title)",
    ]


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (
            "bad.yaml",
            "rubricVersionId: v\nrules:\n  - ruleId: a\n    title: A: B\n",
            "line 4, column 13",
        ),
        ("bad.yaml", "rubricVersionId: v\nrules: [\n", "line 3, column 1"),
        ("bad.json", '{"rubricVersionId": "v",\n "rules": [}\n', "line 2, column 12"),
    ],
)
def test_a_syntax_error_names_the_file_line_and_column(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ScorecardError) as caught:
        Scorecard.load(file)
    (problem,) = caught.value.problems
    assert problem.field == f"{file}, {where}"
    assert problem.message.startswith(("not valid YAML: ", "not valid JSON: "))
    assert "<unicode string>" not in str(caught.value)


def test_unknown_rule_fields_are_kept_when_asked_and_hash_changes_with_rules() -> None:
    data = {"rubricVersionId": "v", "rules": [rule("a", 100) | {"severity": "high"}]}
    card = Scorecard.from_dict(data, unknown_keys=True)
    assert card.to_service()["rules"][0]["severity"] == "high"
    from_service = Scorecard.from_assistant({"config": {"grading": {"scorecard": data}}})
    assert from_service.to_service()["rules"][0]["severity"] == "high"
    assert card.rules[0].judged
    other = Scorecard.from_dict(
        {"rubricVersionId": "v", "rules": [rule("a", 100) | {"title": "B"}]}
    )
    assert other.content_hash != card.content_hash


def test_from_assistant_reads_config_grading_scorecard() -> None:
    card = {"rubricVersionId": "v", "rules": [rule("a", 100, {"type": "turns", "max": 3})]}
    assistant = {"config": {"agent": {}, "grading": {"scorecard": card}}}
    assert Scorecard.from_assistant(assistant).rules[0].check_type == "turns"
    from evalkit.api import AssistantConfig

    config = AssistantConfig.model_validate(
        {"agent": {"instructions": "x"}, "grading": {"scorecard": card}}
    )
    assert Scorecard.from_assistant(config).rubric_version_id == "v"
    with pytest.raises(ScorecardError, match="no scorecard"):
        Scorecard.from_assistant({"config": {"agent": {}}})


def test_rubric_registry_warns_on_changed_rules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from evalkit.grading._io import check_rubric_hash

    assert check_rubric_hash(tmp_path, "v1", "aaa")
    assert check_rubric_hash(tmp_path, "v1", "aaa")
    with caplog.at_level(logging.WARNING, logger="evalkit.grading"):
        assert not check_rubric_hash(tmp_path, "v1", "bbb")
    assert "graded before with other rules" in caplog.text
