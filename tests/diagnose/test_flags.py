"""Simulation flags: one hand-made transcript per rule (and its near miss), in English, Roman
Urdu and Urdu script; the table covers every flag; inputs are read as the store writes them."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalkit.diagnose import FLAG_RULES, flag_rules, simulation_flags
from evalkit.grid import Persona

AGENT_OPEN = (
    "Assalam o alaikum, main Sana hoon Shifa Clinic se, aap ki appointment 14 November ko hai."
)


def frames(
    calls: dict[str, list[tuple[str, str]]], **columns: dict[str, object]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """turns and conversations frames; ``columns`` give per-conversation values by column."""
    turns = [
        {"conversation_id": cid, "index": i, "role": role, "text": text}
        for cid, said in calls.items()
        for i, (role, text) in enumerate(said, start=1)
    ]
    conv = pd.DataFrame({"conversation_id": list(calls)})
    conv["status"] = "done"
    conv["ended_by"] = [said[-1][0] if said else None for said in calls.values()]
    conv["persona_label"] = "p"
    conv["persona_tags"] = "[]"
    conv["error_message"] = None
    for name, values in columns.items():
        conv[name] = [
            values.get(cid, conv.loc[i, name] if name in conv else None)
            for i, cid in enumerate(calls)
        ]
    return pd.DataFrame(turns, columns=["conversation_id", "index", "role", "text"]), conv


def flagged(
    turns: pd.DataFrame, conv: pd.DataFrame | None = None, **kw: object
) -> dict[str, set[str]]:
    found = simulation_flags(turns, conv, **kw)  # type: ignore[arg-type]
    out: dict[str, set[str]] = {}
    for cid, flag in zip(found["conversation_id"], found["flag"], strict=True):
        out.setdefault(cid, set()).add(flag)
    return out


def test_caller_echoes_or_speaks_as_the_agent() -> None:
    turns, conv = frames(
        {
            "echo-ru": [("agent", AGENT_OPEN), ("caller", AGENT_OPEN.upper() + "!")],
            "echo-ur": [
                ("agent", "آپ کی اپائنٹمنٹ ڈاکٹر سلیم کے ساتھ 16 نومبر کو 3 بجے ہے۔"),
                ("caller", "آپ کی اپائنٹمنٹ ڈاکٹر سلیم کے ساتھ 16 نومبر کو 3 بجے ہے"),
            ],
            "as-agent": [
                ("agent", "Hello?"),
                ("caller", "Hi, I'm calling from Shifa Clinic, how can I help you?"),
            ],
            "fine": [("agent", AGENT_OPEN), ("caller", "Jee, 14 November theek hai, shukriya.")],
            "short-echo": [("agent", "Jee?"), ("caller", "Jee?")],  # too short to mean anything
        }
    )
    found = flagged(turns, conv)
    for cid in ("echo-ru", "echo-ur", "as-agent"):
        assert "caller-echoes-agent" in found.get(cid, set()), cid
    assert "fine" not in found
    assert "short-echo" not in found


def test_caller_loops() -> None:
    line = "Mujhe samajh nahi aaya, dobara bataiye."
    turns, conv = frames(
        {
            "three-times": [
                ("agent", "A"),
                ("caller", line),
                ("agent", "B"),
                ("caller", line),
                ("agent", "C"),
                ("caller", line.lower()),
            ],
            "in-a-row": [
                ("agent", "A"),
                ("caller", "I told you I am busy"),
                ("caller", "I told you I am busy!"),
            ],
            "terse": [
                ("agent", "A"),
                ("caller", "Jee."),
                ("agent", "B"),
                ("caller", "Jee."),
                ("agent", "C"),
                ("caller", "Jee."),
            ],
            "twice-apart": [("agent", "A"), ("caller", line), ("agent", "B"), ("caller", line)],
            "who-is-this": [
                *[t for a in "ABCD" for t in (("agent", a), ("caller", "Who is this?"))],
                ("agent", "E"),
                ("caller", "Okay, I am listening now"),
            ],
        }
    )
    found = flagged(turns, conv)
    assert found["three-times"] == {"caller-loops"}
    assert found["in-a-row"] == {"caller-loops"}
    assert "terse" not in found  # short answers repeat naturally
    assert "twice-apart" not in found  # a confused caller asks twice
    assert found["who-is-this"] == {"caller-loops"}  # short, but most of the caller's turns


def test_empty_one_turn_and_ceiling() -> None:
    turns, conv = frames(
        {
            "empty": [],
            "one": [("agent", AGENT_OPEN)],
            "two": [("agent", "A"), ("caller", "B")],
            "ceiling": [("agent", "A")],
        },
        status={"ceiling": "error"},
        error_message={"ceiling": "Simulation reached the five-minute ceiling"},
    )
    found = flagged(turns, conv)
    assert found["empty"] == {"empty-or-one-turn"}
    assert found["one"] == {"empty-or-one-turn"}
    assert found["ceiling"] == {"ended-by-ceiling"}  # an error, so not also "one turn"
    assert "two" not in found


def test_persona_behaviour_never_shown_by_declared_traits() -> None:
    calls = {
        "busy-shown": [
            ("agent", AGENT_OPEN),
            ("caller", "Abhi busy hoon, baad mein baat karte hain."),
        ],
        "busy-shown-ur": [
            ("agent", AGENT_OPEN),
            ("caller", "ابھی مصروف ہوں، بعد میں بات کرتے ہیں۔"),
        ],
        "busy-not-shown": [("agent", AGENT_OPEN), ("caller", "Jee haan, 14 November theek hai.")],
        "hostile-not-shown": [
            ("agent", "Good morning."),
            ("caller", "Good morning, yes that works."),
        ],
        "hostile-shown": [
            ("agent", "Good morning."),
            ("caller", "Why do you people keep calling me? I'm not interested."),
        ],
        "confused-shown": [("agent", AGENT_OPEN), ("caller", "Sorry? Could you say that again?")],
        "untagged": [("agent", AGENT_OPEN), ("caller", "Jee theek hai.")],
    }
    tags = {
        "busy-shown": '["busy"]',
        "busy-shown-ur": '["busy"]',
        "busy-not-shown": '["busy", "outbound"]',
        "hostile-not-shown": '["hostile"]',
        "hostile-shown": '["angry"]',
        "confused-shown": '["confused"]',
    }
    turns, conv = frames(calls, persona_tags=tags)
    found = flagged(turns, conv)
    assert found == {
        "busy-not-shown": {"persona-not-shown"},
        "hostile-not-shown": {"persona-not-shown"},
    }
    reasons = simulation_flags(turns, conv).set_index("conversation_id")["reason"]
    assert "declares 'busy' but the caller never says it is busy" in reasons["busy-not-shown"]
    # tags from Persona objects, by label, when the conversations do not carry them
    conv2 = conv.drop(columns="persona_tags").assign(persona_label="rushed")
    busy = Persona("rushed", "You are in a hurry.", tags=["busy"])
    assert set(flagged(turns, conv2, personas=[busy])) == set(calls) - {
        "busy-shown",
        "busy-shown-ur",
    }


def test_identical_repeats_within_a_cell() -> None:
    same = [("agent", AGENT_OPEN), ("caller", "Jee theek hai, shukriya.")]
    calls = {
        "cellA-0": same,
        "cellA-1": list(same),
        "cellA-2": [("agent", AGENT_OPEN), ("caller", "Nahi.")],
        "cellB-0": same,
    }
    turns, _ = frames(calls)
    found = flagged(turns)  # no conversations: the cell comes from the id
    assert found == {"cellA-0": {"identical-repeats"}, "cellA-1": {"identical-repeats"}}
    reasons = simulation_flags(turns).set_index("conversation_id")["reason"]
    assert "cellA-1" in reasons["cellA-0"]


def test_the_table_and_the_frame() -> None:
    assert flag_rules()["flag"].tolist() == [r.flag for r in FLAG_RULES]
    assert len(FLAG_RULES) == 6
    turns, conv = frames({"x": [("agent", "A"), ("caller", "B")]})
    empty = simulation_flags(turns, conv)
    assert list(empty.columns) == ["conversation_id", "flag", "reason", "run_id"]
    assert empty.empty
    assert empty.attrs["checked"] == 1
    with pytest.raises(ValueError, match="turns lack columns"):
        simulation_flags(turns.drop(columns="role"))
    assert json.loads(conv["persona_tags"][0]) == []
