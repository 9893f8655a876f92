"""The engine's rules as data: traits of the bundled personas, the documented tables, the noise
model, the phrase files in the package, and the terse and inbound-complaint callers."""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml

import evalkit.emulator.dialogue as dialogue
from evalkit.emulator.dialogue import (
    FEATURES,
    TRAITS,
    ConversationSetup,
    NoiseModel,
    act_table,
    feature_table,
    persona_traits,
    plan_conversation,
    trait_table,
)

from .test_dialogue import RECORD, RU_PROMPT, config

ROOT = Path(__file__).parents[2]
BUNDLED_TRAITS = {
    "already-paid": {"hostile"},
    "asks-callback": {"callback"},
    "busy-hangs-up": {"busy"},
    "code-switching": {"code_switch", "cooperative"},
    "confused-elderly": {"confused"},
    "cooperative": {"cooperative"},
    "do-not-call": {"dnc"},
    "english-only": {"cooperative"},
    "hostile": {"hostile"},
    "inbound-complaint": {"complaint"},
    "minimal-answers": {"terse"},
    "noisy-distracted": {"distracted"},
    "price-sensitive": {"price"},
    "reschedule": {"callback", "cooperative"},
    "scam-suspicious": {"hostile"},
    "urdu-script": {"cooperative"},
    "wrong-person": {"wrong_person"},
}


def _persona(label: str) -> dict[str, str]:
    data = yaml.safe_load((ROOT / "personas" / f"{label}.yaml").read_text("utf-8"))
    return {"label": data["label"], "behavior": data["behavior"]}


def test_every_bundled_persona_is_pinned() -> None:
    labels = {p.stem for p in (ROOT / "personas").glob("*.yaml")}
    assert labels == set(BUNDLED_TRAITS)


@pytest.mark.parametrize("label", sorted(BUNDLED_TRAITS))
def test_bundled_persona_traits(label: str) -> None:
    assert persona_traits(_persona(label)) == BUNDLED_TRAITS[label]


@pytest.mark.parametrize("table", [trait_table, feature_table, act_table])
def test_the_docstring_tables_are_the_code_tables(table: object) -> None:
    assert callable(table)
    assert dialogue.__doc__ is not None
    assert table() in dialogue.__doc__


def test_trait_table_rows_are_unique_and_ordered() -> None:
    names = [t.name for t in TRAITS]
    assert len(names) == len(set(names))
    assert [t.priority for t in TRAITS] == sorted(t.priority for t in TRAITS)
    assert all(t.excludes <= set(names) for t in TRAITS)


def test_feature_rates_come_from_the_noise_model() -> None:
    noise = NoiseModel(follow=0.5, confirm_unasked=0.0)
    confirm = next(f for f in FEATURES if f.name == "confirm")
    assert (confirm.rate(noise, True), confirm.rate(noise, False)) == (0.5, 0.0)
    names = {f.name for f in dataclasses.fields(NoiseModel)}
    assert all({f.followed, f.unprompted} <= names for f in FEATURES)


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_noise_model_refuses_a_non_probability(value: float) -> None:
    with pytest.raises(ValueError, match="follow"):
        NoiseModel(follow=value)


def test_a_noiseless_model_always_follows_the_prompt() -> None:
    noise = NoiseModel(follow=1.0, confirm_unasked=0.0)
    for seed in range(40):
        setup = ConversationSetup(config(), {"behavior": "cooperative"}, "ctx", RECORD, seed)
        acts = set().union(*(u.acts for u in plan_conversation(setup, noise=noise)))
        assert "asks_confirmation" in acts


def test_phrase_files_ship_inside_the_package() -> None:
    phrases = resources.files("evalkit.emulator.dialogue").joinpath("phrases")
    names = {p.name for p in phrases.iterdir()}
    assert {"agent.json", "caller.json", "language.json", "urdu.json"} <= names


def test_no_dialogue_module_is_over_500_lines() -> None:
    package = ROOT / "evalkit" / "emulator" / "dialogue"
    for module in package.glob("*.py"):
        assert len(module.read_text("utf-8").splitlines()) <= 500, module.name


def _play(label: str, seed: int) -> list[dialogue.Utterance]:
    setup = ConversationSetup(config(RU_PROMPT), _persona(label), "ctx", RECORD, seed)
    return plan_conversation(setup)


def test_terse_caller_answers_in_a_word_and_never_hangs_up_first() -> None:
    for seed in range(60):
        conv = _play("minimal-answers", seed)
        for utterance in conv[1:]:
            if utterance.role == "caller":
                assert len(utterance.text.split()) <= 2, utterance.text
        assert conv[-1].text == "Ok."
        assert any(u.role == "agent" for u in conv[-3:])


def test_inbound_complaint_ends_with_a_reference_number() -> None:
    chased = 0
    for seed in range(60):
        conv = _play("inbound-complaint", seed)
        callers = [u for u in conv if u.role == "caller"]
        assert any("complains" in u.acts for u in callers)
        agent_next = [u for u in conv if "gives_next_step" in u.acts]
        assert len(agent_next) == 1
        assert re.search(r"CMP-\d{5}", agent_next[0].text)
        chased += sum("ab kya hoga" in u.text for u in callers)
    assert 0 < chased < 60


def test_hostile_persona_is_not_played_as_cooperative() -> None:
    confirmed = sum("confirms" in u.acts for s in range(60) for u in _play("hostile", s))
    objected = sum(any("objects" in u.acts for u in _play("hostile", s)) for s in range(60))
    assert objected == 60
    assert confirmed < 20
