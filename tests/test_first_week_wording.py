"""Issue 33, item 13: the words a first-week user reads in progress lines, rationales,
comparisons and lint findings."""

from __future__ import annotations

import io

import pytest

from evalkit._util._progress import Progress, progress_label
from evalkit.api._tokens import missing_variables
from tests.grading.test_checks import grade_one


def test_a_run_named_after_its_target_is_not_labelled_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALKIT_PROGRESS", "lines")
    stream = io.StringIO()
    with Progress(54, 6, progress_label("prod", "prod"), enabled=True, stream=stream):
        pass
    assert stream.getvalue().startswith("prod: 6 of 54")
    assert progress_label("prod", "nightly") == "prod nightly"
    assert progress_label("prod", "prod-20261128") == "prod-20261128"


def test_a_rule_over_every_speaker_says_no_turn_not_no_any_turn() -> None:
    out = grade_one(
        {"type": "regex", "pattern": "jazz ?cash", "speaker": "all", "mode": "any"},
        {"a": [("agent", "Hello"), ("caller", "ok")]},
    )
    assert out.loc["a", "rationale"] == "no turn matches /jazz ?cash/"
    out = grade_one({"type": "contains", "any": ["x"], "speaker": "all"}, {"a": [("agent", "y")]})
    assert "any" not in out.loc["a", "rationale"]


def test_a_token_missing_from_every_record_says_so_plainly() -> None:
    missing = missing_variables(["name", "date"], [{"date": "1"}, {"date": ""}, {}])
    text = missing.describe()
    assert "no value in every record" not in text
    assert "{{name}}: no record has a value (all 3)" in text
    assert "{{date}}: no value in records" in text
