"""Reading the judge's answer and writing its prompt (pure functions)."""

from __future__ import annotations

import json
import re

import pytest

from evalkit.grading._judge_parse import MalformedAnswer, extract_json_object, parse_answer
from evalkit.grading._judge_prompt import SYSTEM_PROMPT, build_messages, response_format

from .helpers import rule, task

IDS = ["r1", "r2"]
TURNS = {1, 2, 3}


def answer(*items: dict[str, object]) -> str:
    return json.dumps({"verdicts": list(items)})


def item(rule_id: str, verdict: str = "pass", turn: int | None = 1) -> dict[str, object]:
    return {"rule_id": rule_id, "verdict": verdict, "reason": "because", "evidence_turn": turn}


@pytest.mark.parametrize(
    "content",
    [
        '{"a": 1}',
        'Sure! ```json\n{"a": 1}\n``` hope that helps',
        '```\n{"a": 1}\n```',
        'The answer is {"a": 1} and nothing else {',
        'noise {bad json} then {"a": 1}',
    ],
    ids=["bare", "json-fence", "plain-fence", "prose", "after-garbage"],
)
def test_the_first_json_object_is_found(content: str) -> None:
    assert extract_json_object(content) == {"a": 1}


def test_no_object_is_malformed() -> None:
    with pytest.raises(MalformedAnswer, match="no JSON object"):
        extract_json_object("I cannot judge this [1, 2]")


def test_a_valid_answer_is_returned_in_rule_order() -> None:
    parsed = parse_answer(answer(item("r2", "FAIL ", 3), item("r1", "na", None)), IDS, TURNS)
    assert list(parsed) == ["r1", "r2"]
    assert (parsed["r1"].verdict, parsed["r1"].evidence_turn) == ("na", None)
    assert (parsed["r2"].verdict, parsed["r2"].evidence_turn) == ("fail", 3)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (answer(item("r1")), r"missing rule id\(s\) \['r2'\]"),
        (answer(item("r1"), item("r2"), item("r3")), r"unknown rule id\(s\) \['r3'\]"),
        (answer(item("r1"), item("r1"), item("r2")), "answered twice"),
        (answer(item("r1", "maybe"), item("r2")), "verdict"),
        (answer(item("r1", turn=9), item("r2")), "cites turn 9"),
        (json.dumps({"verdicts": [{"rule_id": "r1", "verdict": "pass"}]}), "reason"),
        (json.dumps({"answers": []}), "verdicts"),
    ],
    ids=["missing", "unknown", "duplicate", "bad-verdict", "bad-turn", "no-reason", "no-list"],
)
def test_malformed_answers_say_what_is_wrong(content: str, message: str) -> None:
    with pytest.raises(MalformedAnswer, match=message):
        parse_answer(content, IDS, TURNS)


def test_the_prompt_follows_the_wire_format() -> None:
    t = task("c1", "r1", "r2")
    messages = build_messages(t, (rule("r2", "Says the date"),))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SYSTEM_PROMPT
    for phrase in ("independently", "only what the transcript shows", '"na"', "evidence_turn"):
        assert phrase in SYSTEM_PROMPT
    user = messages[1]["content"]
    block = re.search(r"```json\n(.*)\n```$", user, re.DOTALL)
    assert block is not None
    payload = json.loads(block.group(1))
    assert payload == {
        "transcript": [
            {"turn": 1, "role": "agent", "text": "Hello from c1"},
            {"turn": 2, "role": "caller", "text": "Yes"},
            {"turn": 3, "role": "agent", "text": "Bye"},
        ],
        "rules": [{"rule_id": "r2", "title": "Title of r2", "criterion": "Says the date"}],
    }


def test_the_schema_is_strict_and_lists_the_rule_ids() -> None:
    fmt = response_format((rule("a"), rule("b")))
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    items = schema["properties"]["verdicts"]["items"]
    assert items["properties"]["rule_id"]["enum"] == ["a", "b"]
    assert items["properties"]["verdict"]["enum"] == ["pass", "fail", "na"]
    assert set(items["required"]) == set(items["properties"])
    assert schema["additionalProperties"] is False
    assert items["additionalProperties"] is False
