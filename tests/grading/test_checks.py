"""Every deterministic check type on small hand-made transcripts: verdict, rationale, evidence."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from evalkit.grading import CHECK_TYPES, Scorecard, grade_transcripts

from .helpers import conversations_frame, turns_frame

URDU_GREETING = "السلام علیکم، میں شفا کلینک سے ثنا بات کر رہی ہوں۔"


def grade_one(check: dict[str, Any], convs: dict[str, Any], info: Any = None) -> pd.DataFrame:
    """Grade ``convs`` with a one-rule scorecard; the rows indexed by conversation id."""
    card = Scorecard.from_dict(
        {
            "rubricVersionId": "t",
            "rules": [{"ruleId": "r", "title": "T", "points": 100, "check": check}],
        }
    )
    conversations = conversations_frame(info) if info is not None else None
    grades = grade_transcripts(turns_frame(convs), card, judge=False, conversations=conversations)
    return grades.frame.set_index("conversation_id")


def test_every_check_type_has_a_function_and_a_model() -> None:
    for name, row in CHECK_TYPES.items():
        assert row.name == name
        assert row.model.model_fields["type"].annotation is not None
        assert (row.function is None) == (name == "judge")


def test_contains_reports_the_turn_and_the_text() -> None:
    out = grade_one(
        {"type": "contains", "any": ["Shukriya", "thank you"]},
        {
            "a": [("agent", "Hello"), ("caller", "ok"), ("agent", "Bohat SHUKRIYA, Allah hafiz")],
            "b": [("agent", "Bye"), ("caller", "shukriya")],
        },
    )
    assert out.loc["a", "verdict"] == "pass"
    assert out.loc["a", "evidence_turn"] == 3
    assert out.loc["a", "rationale"] == "agent turn 3 contains 'shukriya'"
    assert out.loc["b", "verdict"] == "fail"  # only the caller said it
    assert "no agent turn contains" in out.loc["b", "rationale"]


def test_contains_normalises_urdu_variants_and_digits() -> None:
    out = grade_one(
        {"type": "contains", "text": "اللہ حافظ"},
        {"a": [("agent", "شکریہ، اللّٰہ حافظ")], "b": [("agent", "الله حافظ")]},
    )
    assert out.loc["a", "verdict"] == "pass"  # diacritics removed
    assert out.loc["b", "verdict"] == "fail"  # ه is not ہ: another spelling, listed separately
    out = grade_one({"type": "contains", "text": "14 نومبر"}, {"a": [("agent", "۱۴ نومبر کو")]})
    assert out.loc["a", "verdict"] == "pass"


def test_not_contains_whole_word() -> None:
    out = grade_one(
        {"type": "not_contains", "any": ["court"], "whole_word": True},
        {"a": [("agent", "With courtesy, sir")], "b": [("agent", "We will go to court.")]},
    )
    assert out.loc["a", "verdict"] == "pass"
    assert out.loc["b", "verdict"] == "fail"
    assert out.loc["b", "rationale"] == "agent turn 1 contains 'court'"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("any", ("pass", "fail")), ("none", ("fail", "pass")), ("all", ("fail", "fail"))],
)
def test_regex_modes(mode: str, expected: tuple[str, str]) -> None:
    convs = {
        "a": [("agent", "Pay via JazzCash"), ("agent", "thanks")],
        "b": [("agent", "hello"), ("caller", "jazzcash?")],
    }
    out = grade_one(
        {"type": "regex", "pattern": r"jazz ?cash", "speaker": "agent", "mode": mode}, convs
    )
    assert (out.loc["a", "verdict"], out.loc["b", "verdict"]) == expected


def test_regex_falls_back_to_python_for_lookarounds() -> None:
    out = grade_one(
        {"type": "regex", "pattern": r"(?<!un)paid", "expect": "match"},
        {"a": [("agent", "it is unpaid")], "b": [("agent", "it is paid")]},
    )
    assert out.loc["a", "verdict"] == "fail"
    assert out.loc["b", "verdict"] == "pass"


def test_turns_min_max_and_speaker() -> None:
    convs = {"a": [("agent", "x"), ("caller", "y")] * 3, "b": [("agent", "x")]}
    out = grade_one({"type": "turns", "min": 2, "max": 4, "speaker": "agent"}, convs)
    assert out.loc["a", "verdict"] == "pass"
    assert out.loc["a", "rationale"] == "3 agent turns (min 2 and max 4)"
    assert out.loc["b", "verdict"] == "fail"


def test_ended_by_prefers_the_record() -> None:
    convs = {"a": [("agent", "x"), ("caller", "bye")], "b": [("agent", "x"), ("caller", "bye")]}
    info = {"a": {"ended_by": "agent"}, "b": {"ended_by": None}}
    out = grade_one({"type": "ended_by", "speaker": "agent"}, convs, info)
    assert out.loc["a", "verdict"] == "pass"
    assert out.loc["a", "rationale"] == "the agent ended the call"
    assert out.loc["b", "verdict"] == "fail"
    assert out.loc["b", "rationale"] == "the caller spoke last"


def test_agent_speaks_first_and_na_without_turns() -> None:
    convs = {"a": [("agent", "hi")], "b": [("caller", "hello?"), ("agent", "hi")]}
    info = {"a": {}, "b": {}, "c": {}}
    out = grade_one({"type": "agent_speaks_first"}, convs, info)
    assert list(out.loc[["a", "b", "c"], "verdict"]) == ["pass", "fail", "na"]
    assert out.loc["c", "rationale"] == "no turns"


def test_script_tells_nastaliq_from_roman_urdu_and_english() -> None:
    convs = {
        "nastaliq": [
            ("agent", URDU_GREETING),
            ("agent", "آپ ۱۴ نومبر کو 5 بجے JazzCash سے ادا کریں۔"),
        ],
        "roman": [("agent", "Assalam o alaikum, main Shifa Clinic se Sana baat kar rahi hoon.")],
        "english": [("agent", "Hello, this is Sana from Shifa Clinic.")],
        "mixed": [
            ("agent", URDU_GREETING),
            ("agent", "Aap ki appointment kal subah das baje hai, theek?"),
        ],
        "silent": [("caller", "hello?")],
    }
    out = grade_one({"type": "script", "script": "arabic", "min_share": 0.8}, convs)
    assert out.loc["nastaliq", "verdict"] == "pass"  # digits, ۱۴ and JazzCash don't count
    assert out.loc["nastaliq", "rationale"] == "100% of agent letters are Arabic script (needs 80%)"
    assert out.loc["roman", "verdict"] == out.loc["english", "verdict"] == "fail"
    assert out.loc["mixed", "verdict"] == "fail"
    assert out.loc["mixed", "evidence_turn"] == 2
    assert out.loc["silent", "verdict"] == "na"


def test_no_placeholders() -> None:
    convs = {
        "a": [("agent", "Aap ki date {{due_date}} hai")],
        "b": [("agent", "Amount {amount_due} hai")],
        "c": [("agent", "No token {here too} or { x }"), ("caller", "{{x}}")],
    }
    out = grade_one({"type": "no_placeholders"}, convs)
    assert out.loc["a", "rationale"] == "agent turn 1 says '{{due_date}}' (unresolved token)"
    assert out.loc["b", "verdict"] == "fail"
    assert out.loc["c", "verdict"] == "pass"


def test_uses_variable_exact_numbers_partial_and_urdu_transliteration() -> None:
    convs = {
        "exact": [("caller", "hi"), ("agent", "Hello Ayesha Khan, Shifa Clinic here")],
        "amount": [("agent", "Aap ke Rs. 15,000 baqi hain")],
        "urdu": [("agent", "السلام علیکم عائشہ خان صاحبہ"), ("agent", "آپ کی رقم ۱۵۰۰۰ روپے ہے")],
        "missing": [("agent", "Hello")],
        "absent": [("agent", "Hello there")],
    }
    info = {
        cid: {"variables": {"customer_name": "Ayesha Khan", "amount_due": 15000}}
        for cid in ("exact", "amount", "urdu", "absent")
    }
    info["missing"] = {"variables": {"amount_due": 1}}
    out = grade_one({"type": "uses_variable", "variable": "customer_name"}, convs, info)
    assert out.loc["exact", "verdict"] == "pass"
    assert out.loc["exact", "evidence_turn"] == 2
    assert out.loc["urdu", "verdict"] == "pass"
    assert "in Urdu script" in out.loc["urdu", "rationale"]
    assert out.loc["absent", "verdict"] == "fail"
    assert out.loc["missing", "verdict"] == "na"
    out = grade_one({"type": "uses_variable", "variable": "amount_due"}, convs, info)
    assert out.loc["amount", "verdict"] == "pass"
    assert out.loc["urdu", "verdict"] == "pass"
    assert out.loc["urdu", "evidence_turn"] == 2
    partial = {"type": "uses_variable", "variable": "customer_name", "partial": True}
    out = grade_one(partial, {"absent": [("agent", "Ayesha ji?")]}, {"absent": info["absent"]})
    assert out.loc["absent", "verdict"] == "pass"


def test_no_repetition_counts_normalised_utterances() -> None:
    line = "Aap ki appointment kal subah das baje hai."
    convs = {
        "a": [("agent", line), ("agent", line.upper()), ("agent", line + "!!")],
        "b": [("agent", line), ("agent", line), ("agent", "ok"), ("agent", "ok"), ("agent", "ok")],
    }
    out = grade_one({"type": "no_repetition", "max_occurrences": 2, "min_chars": 20}, convs)
    assert out.loc["a", "verdict"] == "fail"
    assert out.loc["a", "evidence_turn"] == 3
    assert "said 3 times" in out.loc["a", "rationale"]
    assert out.loc["b", "verdict"] == "pass"  # "ok" is shorter than min_chars


def test_max_turn_chars() -> None:
    convs = {
        "a": [("agent", "x" * 10), ("agent", "y" * 50)],
        "b": [("agent", "short"), ("caller", "z" * 99)],
    }
    out = grade_one({"type": "max_turn_chars", "max_chars": 40}, convs)
    assert out.loc["a", "verdict"] == "fail"
    assert out.loc["a", "rationale"] == "agent turn 2 has 50 characters (max 40)"
    assert out.loc["b", "verdict"] == "pass"


def test_persona_filters_make_na() -> None:
    convs = {"a": [("agent", "hi")], "b": [("agent", "hi")]}
    info = {"a": {"persona_label": "wrong-person"}, "b": {"persona_label": "cooperative"}}
    out = grade_one(
        {"type": "contains", "text": "bye", "skip_personas": ["wrong-person"]}, convs, info
    )
    assert out.loc["a", "verdict"] == "na"
    assert out.loc["a", "rationale"] == "the rule does not apply to persona 'wrong-person'"
    assert out.loc["b", "verdict"] == "fail"
    out = grade_one(
        {"type": "contains", "text": "hi", "only_personas": ["wrong-person"]}, convs, info
    )
    assert list(out["verdict"]) == ["pass", "na"]
