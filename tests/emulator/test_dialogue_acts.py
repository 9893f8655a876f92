"""Acts: what the engine says each utterance does is what the text alone says it does."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.emulator.dialogue import (
    ACTS,
    ConversationSetup,
    plan_conversation,
    recognise_acts,
)

from .red_team import GUARDS, RED_TEAM
from .test_dialogue import EN_PROMPT, RECORD, RU_PROMPT, UR_PROMPT, config

_FOLDER = Path(__file__).parents[2] / "personas"
PERSONAS = [
    yaml.safe_load(p.read_text("utf-8"))
    for p in [*sorted(_FOLDER.glob("*.yaml")), *sorted(RED_TEAM.glob("*.yaml"))]
]
PROMPTS = {
    "ru": RU_PROMPT,
    "ur": UR_PROMPT,
    "en": EN_PROMPT,
    "vague": "Call them.",
    "token": EN_PROMPT + " Mention the late fee due on {{due_date}}.",
    "verify": RU_PROMPT + " Verify you are speaking with the right person first.",
    "red-team": UR_PROMPT + "".join(GUARDS.values()),
}


def _setup(persona: dict[str, Any], prompt: str, seed: int) -> ConversationSetup:
    return ConversationSetup(
        config=config(prompt, initialGreeting=seed % 3 != 0),
        persona={"label": persona["label"], "behavior": persona["behavior"]},
        context="Expecting the call" if seed % 4 else None,
        variables=RECORD if seed % 5 else None,
        seed=seed,
    )


@pytest.mark.parametrize("prompt", sorted(PROMPTS))
def test_recognised_acts_equal_performed_acts(prompt: str) -> None:
    checked = 0
    seen: set[str] = set()
    for persona, seed in itertools.product(PERSONAS, range(16)):
        for utterance in plan_conversation(_setup(persona, PROMPTS[prompt], seed)):
            recognised = recognise_acts(utterance.text, utterance.role)
            assert recognised == utterance.acts, (utterance.role, utterance.text)
            seen |= utterance.acts
            checked += 1
    assert checked > 1000
    assert {"states_purpose", "apologises", "closes_politely"} <= seen


def test_every_act_occurs_somewhere() -> None:
    seen: set[str] = set()
    for persona, seed, prompt in itertools.product(PERSONAS, range(12), PROMPTS.values()):
        for utterance in plan_conversation(_setup(persona, prompt, seed)):
            seen |= utterance.acts
    assert seen == {a.name for a in ACTS}


def test_unresolved_token_is_an_act_of_the_agent_only() -> None:
    assert "leaves_token_unresolved" in recognise_acts("Your fee is due on {{due_date}}.")
    assert recognise_acts('Sorry, what date? What is "{{due_date}}"?', "caller") == {
        "questions_token"
    }


def test_plain_text_has_no_acts() -> None:
    assert recognise_acts("The weather is nice.") == frozenset()
    assert recognise_acts("The weather is nice.", "caller") == frozenset()


def test_acts_are_named_once_and_by_role() -> None:
    names = [a.name for a in ACTS]
    assert len(names) == len(set(names))
    assert {a.role for a in ACTS} == {"agent", "caller"}
