"""The pieces of optimize that need no service: the pre-run check of a candidate, what a round
shows its proposer (never a held-out cell), the proposer's prompt and answer parsing."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.grading import Scorecard
from evalkit.tuning import OptimizeOptions, ProposalRequest
from evalkit.tuning._candidates import check_candidate, clean_prompt, needed_tokens
from evalkit.tuning._failures import failing_rules
from evalkit.tuning._proposer import _entries
from evalkit.tuning._proposer_prompt import PROPOSER_PROMPT_VERSION, FailingRule, build_messages

RECORDS = [{"name": "Ayesha", "day": "Monday"}, {"name": "Bilal", "day": "Friday"}]
CURRENT = "Call {{name}} about {{day}}. Be polite."


def check(text: str, **kw: object) -> str | None:
    """The refusal in words (``refused: why`` / ``duplicate: why``), or None."""
    keep = needed_tokens(CURRENT, RECORDS)
    refusal = check_candidate(text, current=CURRENT, keep=keep, records=RECORDS, **kw)  # type: ignore[arg-type]
    return None if refusal is None else str(refusal)


def test_candidates_refused_before_running() -> None:
    assert check("Call {{name}} about {{day}}. Be polite and brief.") is None
    assert check("   ") == "refused: empty prompt"
    assert check("Here is the improved prompt: call them.") == "refused: prose, not a prompt"
    assert check("Call {{name}}. Be polite.") == "refused: drops {{day}}, which the records fill"
    added = check("Call {{name}} about {{day}} at {{clinic}}.")
    assert added is not None
    assert added.startswith("refused: adds tokens the records do not fill: {{clinic}}")
    assert check(CURRENT) == "duplicate: unchanged from the current prompt"
    twin = "Call {{name}} about {{day}}. Smile."
    assert check(twin, seen=[twin]) == "duplicate: the same as another candidate"
    long = "Call {{name}} about {{day}}. " + "x" * 100
    assert (
        check(long, max_chars=50)
        == f"refused: {len(long):,} characters, over the prompt limit of 50"
    )


GOOD = "Call {{name}} about {{day}}. Be polite and brief."


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (GOOD + "\x00", "refused: holds the control character U+0000"),
        ("\x1b[31m" + GOOD, "refused: holds the control character U+001B"),
        (
            "\u202e" + GOOD,
            "refused: holds the bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE)",
        ),
        (
            GOOD[:5] + "\u2066" + GOOD[5:],
            "refused: holds the bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE)",
        ),
        (GOOD + "\ud800", "refused: holds a lone surrogate (U+D800), not text"),
        ("\u200b\u200b\uff28ere is the new prompt: " + GOOD, "refused: prose, not a prompt"),
        ("\ufeff\u2060Sure, " + GOOD, "refused: prose, not a prompt"),
        ("\u200b" + CURRENT + "\u200b", "duplicate: unchanged from the current prompt"),
        (
            "\uff23all {{name}} about {{day}}. Be polite.",
            "duplicate: unchanged from the current prompt",
        ),
    ],
)
def test_hidden_characters_never_pass(text: str, said: str) -> None:
    """Control, bidirectional and invisible characters: refused, or normalised away before
    the prose filter and the duplicate check read the prompt."""
    assert check(text) == said


def test_what_runs_is_the_normalised_prompt() -> None:
    assert clean_prompt("\u200b\u200b\uff23all {{name}}\u00ad.\u200e\n") == "Call {{name}}."
    urdu = "\u0622\u067e \u0645\u06cc\u200c\u06ba {{name}}"  # a ZWNJ inside a word stays
    assert clean_prompt("\u200d" + urdu + "\u200c") == urdu
    assert check_candidate("\u200b" + urdu, current=CURRENT, keep={"name"}, records=RECORDS) is None


def test_a_token_some_record_lacks_need_not_be_kept() -> None:
    records = [{"name": "A", "day": "Mon"}, {"name": "B"}]
    assert needed_tokens(CURRENT, records) == {"name"}


def _grades() -> pd.DataFrame:
    rows = []
    for cell, fails in (("sel-1", "confirm"), ("sel-2", "confirm"), ("held-1", "close")):
        for rep in range(2):
            cid = f"{cell}-{rep}"
            for rule, title in (("confirm", "Asks to confirm"), ("close", "Says goodbye")):
                rows.append(
                    {
                        "conversation_id": cid,
                        "cell_id": cell,
                        "run_id": "r",
                        "rule_id": rule,
                        "title": title,
                        "verdict": "fail" if rule == fails else "pass",
                        "points": 50.0,
                        "rationale": f"{cell} {rule} rationale",
                        "evidence_turn": None,
                    }
                )
    return pd.DataFrame(rows)


def _card() -> Scorecard:
    return Scorecard.validate(
        {
            "rubricVersionId": "t",
            "rules": [
                {"ruleId": "confirm", "title": "Asks to confirm", "points": 50,
                 "check": {"type": "judge", "criterion": "asks yes or no"}},
                {"ruleId": "close", "title": "Says goodbye", "points": 50,
                 "check": {"type": "contains", "any": ["bye"], "speaker": "agent"}},
            ],
        }
    )  # fmt: skip


def _turns(grades: pd.DataFrame) -> pd.DataFrame:
    ids = sorted(set(grades["conversation_id"]))
    return pd.DataFrame(
        {
            "run_id": "r",
            "conversation_id": ids,
            "index": 1,
            "role": "agent",
            "text": [f"hello from {i}" for i in ids],
        }
    )


def test_a_round_never_shows_held_out_cells() -> None:
    card = _card()
    grades = _grades()
    rules = failing_rules(grades, _turns(grades), card, held_out={"held-1"})
    assert [r.rule_id for r in rules] == ["confirm"]  # "close" failed on held-out cells only
    (rule,) = rules
    assert rule.criterion == "asks yes or no"
    assert (rule.failures, rule.decided) == (4, 4)
    text = json.dumps([r.to_json() for r in rules])
    assert "held-1" not in text


def test_the_prompt_is_versioned_and_carries_the_block() -> None:
    request = ProposalRequest(
        "Call {{name}}.",
        (FailingRule("confirm", "Asks to confirm", "asks yes or no", 3, 4, 45.0),),
        must_keep=("name",),
        candidates=3,
        round=2,
    )
    system, user = build_messages(request)
    assert PROPOSER_PROMPT_VERSION in system["content"]
    assert "Propose 3 different candidate prompts" in system["content"]
    assert "{{token}}" in system["content"]
    block = json.loads(user["content"].split("```json\n", 1)[1].rsplit("```", 1)[0])
    assert block["must_keep"] == ["name"]
    assert block["failing_rules"][0]["failed"] == "3 of 4 calls"
    assert block["round"] == 2


def test_answers_are_parsed_or_called_malformed() -> None:
    found, dropped = _entries(
        '```json\n{"candidates": [{"instructions": "A", "rationale": "r"}, {"nope": 1}]}\n```'
    )
    assert [p.instructions for p in found] == ["A"]
    assert dropped == 1
    from evalkit.grading._judge_parse import MalformedAnswer

    with pytest.raises(MalformedAnswer, match="no JSON object"):
        _entries("I would make it friendlier.")
    with pytest.raises(MalformedAnswer, match="no candidates list"):
        _entries('{"prompt": "x"}')
    # a lone surrogate is not text: its entry is dropped and counted, a rationale cleaned
    found, dropped = _entries(
        '{"candidates": [{"instructions": "A\\ud800"}, '
        '{"instructions": "B", "rationale": "r\\udfff"}]}'
    )
    assert [(p.instructions, p.rationale) for p in found] == [("B", "r\ufffd")]
    assert dropped == 1


def test_options_are_checked_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"OptimizeOptions.rounds must be an integer >= 1"):
        OptimizeOptions(rounds=0)
    with pytest.raises(ValueError, match=r"OptimizeOptions.holdout must be in \(0, 1\)"):
        OptimizeOptions(holdout=0.0)
    with pytest.raises(ValueError, match=r"OptimizeOptions\.max_conversations"):
        OptimizeOptions(max_conversations=0)
    with pytest.raises(
        ValueError, match=r"OptimizeOptions\.confirm_repeats must be an integer >= 0"
    ):
        OptimizeOptions(confirm_repeats=-1)
    opts = OptimizeOptions(candidates=4, max_repeats=2, rounds=3)
    # the draft 36, a round 144, the fresh repeats of a winner and the draft 72
    assert (opts.minimum(18), opts.expected(18)) == (36 + 144 + 72, 36 + 3 * 144 + 72)
    none = OptimizeOptions(candidates=4, max_repeats=2, rounds=3, confirm_repeats=0)
    assert (none.minimum(18), none.expected(18)) == (180, 468)


def test_a_round_quotes_no_word_of_a_contact_record() -> None:
    """The proposer is a model outside evalkit: its examples hide every word of the grid's
    records (names, clinics), keeping the rest of the quote as written."""
    card = _card()
    grades = _grades()
    turns = _turns(grades)
    turns["text"] = "Assalam o alaikum AYESHA ji, Shifa Clinic se baat ho rahi hai."
    records = [{"name": "Ayesha Khan", "clinic": "Shifa Clinic"}, {"name": "Bilal"}]
    ids = sorted(set(grades["conversation_id"]))
    conversations = pd.DataFrame(
        {
            "conversation_id": ids,
            "variables": [json.dumps(records[i % 2]) for i in range(len(ids))],
        }
    )
    shown = failing_rules(grades, turns, card, held_out=(), conversations=conversations)
    quotes = [e for r in shown for c in r.clusters for e in c["examples"]]
    assert quotes, shown
    for quote in quotes:
        for word in ("ayesha", "shifa", "clinic", "khan", "bilal"):
            assert word not in quote.casefold(), quote
        assert quote.startswith("agent: Assalam o alaikum [record] ji, [record] [record] se baat")
    # without the records the quote is as written (what the old rounds showed)
    plain = failing_rules(grades, turns, card, held_out=())
    assert any("AYESHA" in e for r in plain for c in r.clusters for e in c["examples"])
