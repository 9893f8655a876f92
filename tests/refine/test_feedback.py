"""Owner feedback: the limit checked before sending, and suggestions from failing rules."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit import Client, InvalidRequestError
from evalkit.refine import (
    MAX_FEEDBACK_CHARS,
    refine_and_wait,
    suggest_feedback,
    validate_feedback,
)

RULES = {
    "urdu-script": ("The agent speaks in Urdu (Nastaliq) script", 10.0),
    "polite-close": ("The agent closes with an Urdu farewell", 5.0),
    "short-call": ("The call stays short", 5.0),
}


def _grades(verdicts: dict[tuple[str, str], str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A grades frame (cell, rule) -> verdict, one conversation per cell, and its turns."""
    rows, turns = [], []
    for (cell, rule), verdict in verdicts.items():
        title, points = RULES[rule]
        cid = f"{cell}-0"
        rows.append(
            {
                "conversation_id": cid,
                "cell_id": cell,
                "rule_id": rule,
                "title": title,
                "points": points,
                "verdict": verdict,
                "rationale": f"rationale of {rule} in {cell}",
                "evidence_turn": 2 if verdict == "fail" else pd.NA,
            }
        )
        turns.append(
            {"conversation_id": cid, "index": 2, "role": "agent", "text": f"said in {cell}"}
        )
    frame = pd.DataFrame(rows)
    frame["evidence_turn"] = frame["evidence_turn"].astype("Int64")
    return frame, pd.DataFrame(turns).drop_duplicates()


@pytest.mark.parametrize(
    ("value", "problem"),
    [(None, "string"), (42, "string"), ("   ", "empty"), ("x" * 2001, "at most 2000")],
    ids=["none", "int", "blank", "too-long"],
)
def test_bad_feedback_is_refused_before_anything_is_sent(
    value: object, problem: str, tmp_path: Path
) -> None:
    # a closed port: anything sent would fail with a connection error instead
    with (
        Client("http://127.0.0.1:9/v1", "sk_api_" + "k" * 32) as client,
        pytest.raises(InvalidRequestError) as caught,
    ):
        refine_and_wait("a1", value, client=client, store=tmp_path)  # type: ignore[arg-type]
    assert caught.value.fields == ["ownerFeedback"]
    assert problem in str(caught.value)
    assert not (tmp_path / ".refine").exists()


def test_feedback_at_the_limit_is_accepted() -> None:
    text = "y" * MAX_FEEDBACK_CHARS
    assert validate_feedback(text) == text


def test_suggestion_names_failing_rules_worst_first_with_quotes() -> None:
    frame, turns = _grades(
        {
            ("c1", "urdu-script"): "fail",
            ("c1", "polite-close"): "fail",
            ("c2", "urdu-script"): "fail",
            ("c2", "polite-close"): "pass",
            ("c1", "short-call"): "pass",
        }
    )
    text = suggest_feedback(frame, turns=turns)
    lines = text.splitlines()
    assert lines[1].startswith("- The agent speaks in Urdu (Nastaliq) script (missed in 2 of 2")
    assert lines[2].startswith("- The agent closes with an Urdu farewell (missed in 1 of 2")
    assert '"agent: said in c1"' in lines[1]
    assert "stays short" not in text  # it never failed


def test_suggestion_never_quotes_or_counts_held_out_cells() -> None:
    frame, turns = _grades(
        {
            ("train", "urdu-script"): "fail",
            ("held", "urdu-script"): "fail",
            ("held", "polite-close"): "fail",
            ("train", "polite-close"): "pass",
        }
    )
    text = suggest_feedback(frame, turns=turns, exclude_cells={"held"})
    assert "held" not in text
    assert "missed in 1 of 1" in text
    assert "farewell" not in text  # it failed only in the held-out cell


def test_suggestion_respects_the_feedback_limit_and_quote_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame, _ = _grades({(f"c{i}", "urdu-script"): "fail" for i in range(5)})
    long_turns = pd.DataFrame(
        [
            {"conversation_id": f"c{i}-0", "index": 2, "role": "agent", "text": "lafz " * 200}
            for i in range(5)
        ]
    )
    text = suggest_feedback(frame, turns=long_turns)
    quotes = [q for q in text.split('"')[1::2]]
    assert quotes
    assert all(len(q) <= 118 for q in quotes)
    assert len(text) <= MAX_FEEDBACK_CHARS
    # a behaviour that does not fit in the service's limit is left out whole
    monkeypatch.setattr("evalkit.refine._feedback.MAX_FEEDBACK_CHARS", 60)
    assert suggest_feedback(frame, turns=long_turns) == ""


def test_nothing_failed_suggests_nothing() -> None:
    frame, turns = _grades({("c1", "urdu-script"): "pass", ("c2", "short-call"): "na"})
    assert suggest_feedback(frame, turns=turns) == ""


def test_secrets_in_evidence_are_masked() -> None:
    frame, _ = _grades({("c1", "urdu-script"): "fail"})
    key = "sk_api_" + "s3cr3t" * 6
    turns = pd.DataFrame(
        [{"conversation_id": "c1-0", "index": 2, "role": "agent", "text": f"my key {key}"}]
    )
    text = suggest_feedback(frame, turns=turns)
    assert key not in text
    assert "sk_api_…" in text
