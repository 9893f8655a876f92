"""The repo's scorecards: valid for the service, and every check follows scorecards/README.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.api import Scorecard as ServiceScorecard
from evalkit.api._requests import request_errors
from evalkit.grading import CHECK_TYPES, Scorecard
from evalkit.grid import load_personas

REPO = Path(__file__).resolve().parent.parent
SCORECARDS = sorted((REPO / "scorecards").glob("*.yaml"))


def check_problems(check: Any, labels: set[str]) -> list[str]:
    """Everything wrong with one rule's ``check`` block, by the package's typed check models."""
    card = {
        "rubricVersionId": "x",
        "rules": [{"ruleId": "r", "title": "t", "points": 100, "check": check}],
    }
    return [str(p) for p in Scorecard.problems(card, persona_labels=labels)]


def service_part(scorecard: dict[str, Any]) -> dict[str, Any]:
    rules = [{k: v for k, v in rule.items() if k != "check"} for rule in scorecard["rules"]]
    return {**{k: v for k, v in scorecard.items() if k != "rules"}, "rules": rules}


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def persona_labels() -> set[str]:
    """Every bundled persona's label: the personas folder and its red-team pack."""
    return {p.label for p in load_personas([REPO / "personas", REPO / "personas" / "red-team"])}


def test_there_are_three_scorecards_with_unique_rubric_versions() -> None:
    assert len(SCORECARDS) >= 3
    versions = [load(p)["rubricVersionId"] for p in SCORECARDS]
    assert len(set(versions)) == len(versions)


@pytest.mark.parametrize("path", SCORECARDS, ids=lambda p: p.stem)
def test_service_part_passes_check_scorecard(path: Path) -> None:
    scorecard = load(path)
    assert set(scorecard) == {"rubricVersionId", "rules"}
    assert request_errors(ServiceScorecard, service_part(scorecard)) == []
    assert sum(rule["points"] for rule in scorecard["rules"]) == 100
    for rule in scorecard["rules"]:
        assert set(rule) <= {"ruleId", "title", "points", "check"}, rule
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule["ruleId"])


@pytest.mark.parametrize("path", SCORECARDS, ids=lambda p: p.stem)
def test_every_check_is_known_with_its_parameters(path: Path, persona_labels: set[str]) -> None:
    scorecard = load(path)
    kinds = set()
    for rule in scorecard["rules"]:
        assert "check" in rule, rule["ruleId"]
        assert check_problems(rule["check"], persona_labels) == [], rule["ruleId"]
        kind = rule["check"]["type"]
        kinds.add(kind)
        if kind == "judge":
            assert len(rule["check"].get("criterion", "")) >= 80, rule["ruleId"]
    assert kinds - {"judge"}, "a scorecard needs deterministic checks too"
    assert "judge" in kinds


def test_the_scorecards_use_most_deterministic_types() -> None:
    used = {rule["check"]["type"] for p in SCORECARDS for rule in load(p)["rules"]}
    assert len(used - {"judge"}) >= 8


def test_readme_documents_every_check_type() -> None:
    readme = (REPO / "scorecards" / "README.md").read_text(encoding="utf-8")
    for kind in CHECK_TYPES:
        assert f"| `{kind}` |" in readme, kind
    for key in ("only_personas", "skip_personas", "speaker", "min_share", "max_occurrences"):
        assert f"`{key}`" in readme, key


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"type": "spelling"}, "unknown check type"),
        ({"type": "script", "script": "arabic"}, "check.min_share: missing"),
        (
            {"type": "script", "script": "cyrillic", "min_share": 0.5},
            "check.script: Input should be",
        ),
        ({"type": "contains", "speaker": "agent"}, "needs 'text' or 'any'"),
        (
            {"type": "uses_variable", "varible": "x"},
            "check.varible: unknown key 'varible' (did you mean 'variable'?)",
        ),
        ({"type": "turns", "min": 5, "max": 2}, "min (5) > max (2)"),
        ({"type": "judge", "skip_personas": ["nobody"]}, "names unknown persona 'nobody'"),
    ],
)
def test_the_contract_checker_catches_mistakes(
    check: dict[str, Any], problem: str, persona_labels: set[str]
) -> None:
    assert any(problem in p for p in check_problems(check, persona_labels))


def test_check_scorecard_catches_a_broken_total() -> None:
    scorecard = service_part(load(SCORECARDS[0]))
    scorecard["rules"][0]["points"] += 1
    assert [str(p) for p in request_errors(ServiceScorecard, scorecard)] == [
        "rules: points must total exactly 100, got 101"
    ]
