"""The trait table's ``said`` patterns: every value that has them is said by the words that ask
for it and by each sentence the emulated generator says it with, and a behaviour that leaves the
language, hostility and goal out says none of them."""

from __future__ import annotations

import random

import pytest

from evalkit.emulator._generator_rules import SENTENCES, behaviour_for
from evalkit.personas import TRAIT_AXES, TraitSpace, TraitValue, trait_axes

CHECKED = ("language", "hostility", "goal")
VALUES = [(axis.name, value) for axis in TRAIT_AXES for value in axis.values]


@pytest.mark.parametrize(("axis", "value"), VALUES, ids=[f"{a}={v.value}" for a, v in VALUES])
def test_a_value_is_said_by_the_words_that_ask_for_it(axis: str, value: TraitValue) -> None:
    assert bool(value.said) == (axis in CHECKED)
    assert value.is_said(value.describes)
    for sentence in SENTENCES.get(axis, {}).get(value.value, ()):
        assert value.is_said(sentence), sentence


def test_a_behaviour_without_the_shown_axes_says_none_of_them() -> None:
    space = TraitSpace()
    traits = {
        "cooperation": "reluctant",
        "knowledge": "vague",
        "language": "roman-urdu",
        "patience": "impatient",
        "hostility": "hostile",
        "goal": "reschedule",
        "noise": "noisy",
        "age": "elderly",
    }
    told = behaviour_for(traits, space.describe(traits), random.Random(1))
    mute = behaviour_for(traits, {}, random.Random(1), leave_out=CHECKED)
    assert space.unsaid(traits, told) == []
    assert space.unsaid(traits, mute) == [
        ("language", "roman-urdu"),
        ("hostility", "hostile"),
        ("goal", "reschedule"),
    ]


def test_the_axes_table_shows_the_patterns() -> None:
    table = trait_axes()
    said = table.set_index(["axis", "value"])["said"]
    assert said[("language", "english")] == r"\benglish\b | angrezi | انگریزی"
    assert said[("age", "elderly")] == ""


def test_a_behaviour_written_in_urdu_says_its_traits_too() -> None:
    """A generator may write the behaviour itself in Nastaliq or Roman Urdu."""
    space = TraitSpace()
    asked = {"language": "urdu-nastaliq", "hostility": "hostile", "goal": "reschedule"}
    assert space.unsaid(asked, "آپ کو اس کال پر غصہ ہے، اور آپ کسی اور دن کا وقت چاہتے ہیں۔") == []
    roman = {"language": "roman-urdu", "hostility": "annoyed", "goal": "ask-cost"}
    text = "Aap Roman Urdu mein baat karte hain, naraz hain, aur qeemat poochte hain."
    assert space.unsaid(roman, text) == []
    assert space.unsaid(roman, "Aap baat karte hain.") == [
        ("language", "roman-urdu"),
        ("hostility", "annoyed"),
        ("goal", "ask-cost"),
    ]
