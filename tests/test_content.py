"""The repo's scorecards: valid for the service, and every check follows scorecards/README.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.api._validation import check_scorecard, errors_only
from evalkit.grid import load_personas

REPO = Path(__file__).resolve().parent.parent
SCORECARDS = sorted((REPO / "scorecards").glob("*.yaml"))
SPEAKERS = {"agent", "caller", "all"}


def _str(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _strings(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(_str(x) for x in v)


def _share(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1


def _regex(v: Any) -> bool:
    if not _str(v):
        return False
    re.compile(v)
    return True


Validator = Callable[[Any], bool]
COMMON: dict[str, Validator] = {
    "type": _str,
    "only_personas": _strings,
    "skip_personas": _strings,
}
SPEAKER: dict[str, Validator] = {"speaker": lambda v: v in SPEAKERS}
TEXT: dict[str, Validator] = {
    "text": _str,
    "any": _strings,
    **SPEAKER,
    "case_sensitive": _bool,
    "whole_word": _bool,
}

# type -> (groups of keys of which at least one is required, every allowed key with its check)
SCHEMA: dict[str, tuple[list[set[str]], dict[str, Validator]]] = {
    "contains": ([{"text", "any"}], TEXT),
    "not_contains": ([{"text", "any"}], TEXT),
    "regex": (
        [{"pattern"}],
        {
            "pattern": _regex,
            **SPEAKER,
            "ignore_case": _bool,
            "expect": lambda v: v in {"match", "no_match"},
        },
    ),
    "turns": ([{"min", "max"}], {"min": _int, "max": _int, **SPEAKER}),
    "ended_by": ([{"speaker"}], {"speaker": lambda v: v in {"agent", "caller"}}),
    "agent_speaks_first": ([], {"expected": _bool}),
    "script": (
        [{"script"}, {"min_share"}],
        {"script": lambda v: v in {"arabic", "latin"}, "min_share": _share, **SPEAKER},
    ),
    "no_placeholders": ([], {**SPEAKER}),
    "uses_variable": (
        [{"variable"}],
        {"variable": _str, **SPEAKER, "partial": _bool, "case_sensitive": _bool},
    ),
    "no_repetition": (
        [],
        {**SPEAKER, "max_occurrences": lambda v: _int(v) and v >= 1, "min_chars": _int},
    ),
    "judge": ([], {"criterion": _str}),
}


def check_problems(check: Any, labels: set[str]) -> list[str]:
    """Everything wrong with one rule's ``check`` block, by the README's contract."""
    if not isinstance(check, dict):
        return [f"check must be a mapping, got {check!r}"]
    kind = check.get("type")
    if kind not in SCHEMA:
        return [f"unknown check type {kind!r}"]
    required, allowed = SCHEMA[kind]
    allowed = {**COMMON, **allowed}
    out: list[str] = []
    for group in required:
        if not group & check.keys():
            out.append(f"{kind}: needs {' or '.join(sorted(group))}")
    for key, value in check.items():
        if key not in allowed:
            out.append(f"{kind}: unknown key {key!r}")
        elif not allowed[key](value):
            out.append(f"{kind}: bad value for {key}: {value!r}")
    for key in ("only_personas", "skip_personas"):
        for label in check.get(key) or []:
            if label not in labels:
                out.append(f"{kind}: {key} names unknown persona {label!r}")
    if kind == "turns" and {"min", "max"} <= check.keys() and check["min"] > check["max"]:
        out.append("turns: min > max")
    return out


def service_part(scorecard: dict[str, Any]) -> dict[str, Any]:
    rules = [{k: v for k, v in rule.items() if k != "check"} for rule in scorecard["rules"]]
    return {**{k: v for k, v in scorecard.items() if k != "rules"}, "rules": rules}


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def persona_labels() -> set[str]:
    return {p.label for p in load_personas(REPO / "personas")}


def test_there_are_three_scorecards_with_unique_rubric_versions() -> None:
    assert len(SCORECARDS) >= 3
    versions = [load(p)["rubricVersionId"] for p in SCORECARDS]
    assert len(set(versions)) == len(versions)


@pytest.mark.parametrize("path", SCORECARDS, ids=lambda p: p.stem)
def test_service_part_passes_check_scorecard(path: Path) -> None:
    scorecard = load(path)
    assert set(scorecard) == {"rubricVersionId", "rules"}
    assert check_scorecard(service_part(scorecard)) == []
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
    for kind in SCHEMA:
        assert f"| `{kind}` |" in readme, kind
    for key in ("only_personas", "skip_personas", "speaker", "min_share", "max_occurrences"):
        assert f"`{key}`" in readme, key


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"type": "spelling"}, "unknown check type"),
        ({"type": "script", "script": "arabic"}, "needs min_share"),
        ({"type": "script", "script": "cyrillic", "min_share": 0.5}, "bad value for script"),
        ({"type": "contains", "speaker": "agent"}, "needs any or text"),
        ({"type": "uses_variable", "varible": "x"}, "unknown key 'varible'"),
        ({"type": "turns", "min": 5, "max": 2}, "min > max"),
        ({"type": "judge", "skip_personas": ["nobody"]}, "unknown persona 'nobody'"),
    ],
)
def test_the_contract_checker_catches_mistakes(
    check: dict[str, Any], problem: str, persona_labels: set[str]
) -> None:
    assert any(problem in p for p in check_problems(check, persona_labels))


def test_check_scorecard_catches_a_broken_total() -> None:
    scorecard = service_part(load(SCORECARDS[0]))
    scorecard["rules"][0]["points"] += 1
    assert errors_only(check_scorecard(scorecard))
