"""The emulated persona generator's rules (data): trait values -> sentences of a behaviour text.

Each row of :data:`SENTENCES` is one trait value (axis, value) and the sentences that say it,
one drawn per persona (seeded), written to the caller model in the second person as a persona
file's ``behavior`` is. The words are chosen so that the dialogue engine
(``evalkit/emulator/dialogue``, its persona-trait table) plays what the value asks for and
nothing else: "elderly" and "hard of hearing" make the confused caller, "noisy street" and
"traffic" the distracted one, "annoyed" and "hostile" the hostile one, "reschedule" the caller
who asks for another time, "cost" and "discount" the one who asks about price, "stop calling"
the do-not-call request, "busy" the one who ends the call early, "minimal answers" the terse
one, "code-switch" the one who mixes Urdu and English. A value the table does not have is said
with the words the request describes it with.

What the generator is never told: the emulator's planted weaknesses
(``dialogue/_weaknesses.py``), which make a draft fail for some trait combinations.

:data:`FLAWS` are the mistakes an LLM generator makes, drawn with the settings' ``flawRate``
so evalkit's checks have something to catch: a behaviour over the length limit, a
``{{token}}`` the records cannot fill, a key-shaped secret, a near copy of the persona before
it, a behaviour that leaves out what was asked for (its caller will not show it), no label.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Final

from ..api import API_KEY_PREFIX

__all__ = [
    "AXIS_ORDER",
    "FLAWS",
    "LABEL_ORDER",
    "QUIET_VALUES",
    "SENTENCES",
    "behaviour_for",
    "label_for",
    "spoil",
]

SENTENCES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "age": {
        "young": (
            "You are a university student in your early twenties.",
            "You are a young office worker of about 25.",
        ),
        "middle-aged": (
            "You are in your forties and teach at a school.",
            "You are a middle-aged accountant with a family.",
        ),
        "elderly": (
            "You are elderly, about 74, and a little hard of hearing.",
            "You are a retired man of about 78 who is hard of hearing on the phone.",
        ),
    },
    "language": {
        "urdu-nastaliq": (
            "You speak only Urdu and write every line in Urdu (Nastaliq) script, for example: "
            '"جی، فرمائیے؟"',
        ),
        "roman-urdu": (
            'You speak Urdu written in Roman letters, for example: "Jee, boliye?"',
            'You answer in Urdu typed in Roman letters: "Haan ji, bataiye."',
        ),
        "english": (
            'You speak English only, for example: "Sorry, who is this?"',
            'You answer in plain English: "Yes, go ahead."',
        ),
        "code-switching": (
            "You code-switch, putting English words into your Urdu sentences: "
            '"Haan, main next week free hoon, but time confirm karna hai."',
        ),
    },
    "cooperation": {
        "cooperative": (
            "You are cooperative and friendly: you answer what you are asked and confirm "
            "details that match your record.",
        ),
        "reluctant": (
            "You are reluctant to talk and answer slowly, without enthusiasm.",
            "You take a while to warm up and say little at first.",
        ),
        "uncooperative": (
            "You give minimal answers, one or two words, and never volunteer anything.",
        ),
    },
    "knowledge": {
        "expects": ("You were expecting this call and know what it is about.",),
        "vague": ("You vaguely remember booking something, but not the details.",),
        "unaware": ("You have no idea what this call is about and want to know who is ringing.",),
    },
    "patience": {
        "patient": ("You let the agent finish before you speak.",),
        "impatient": (
            "You are impatient: you want the point at once and cut long explanations short.",
        ),
    },
    "hostility": {
        "calm": ("You stay calm and courteous.",),
        "annoyed": ("You are annoyed at being called and let it show.",),
        "hostile": ("You are hostile and rude, and you object to the call.",),
    },
    "goal": {
        "confirm": ("You want to confirm the appointment and get on with your day.",),
        "reschedule": ("You cannot make that time and want to reschedule to another day.",),
        "ask-cost": ("You ask what it will cost and whether there is a discount.",),
        "opt-out": ("You want this number off their list: ask them to stop calling.",),
        "end-quickly": ("You are busy and want to end the call fast.",),
    },
    "noise": {
        "quiet": ("You take the call in a quiet room.",),
        "noisy": ("You are on a noisy street with traffic and you mishear things.",),
    },
}
"""(axis -> value -> the sentences that say it); one is drawn per persona."""

LABEL_ORDER: Final = (
    "goal",
    "hostility",
    "age",
    "noise",
    "language",
    "cooperation",
    "knowledge",
    "patience",
)
"""The order a label names the unusual values in (at most four of them)."""

AXIS_ORDER: Final = (
    "age",
    "language",
    "cooperation",
    "knowledge",
    "patience",
    "hostility",
    "goal",
    "noise",
)
"""The order a behaviour says the traits in (the others follow, sorted)."""

QUIET_VALUES: Final = frozenset({"quiet", "calm", "patient", "expects", "cooperative", "confirm"})
"""Values a label leaves out (they describe the easy caller)."""

CLOSING: Final = (
    "Answer consistently with your contact record, and end the call once the agent is done.",
    "Keep to your contact record; when the agent has finished, say goodbye and end the call.",
)

FLAWS: Final = ("long", "token", "secret", "duplicate", "mute", "nolabel")
"""The mistakes a flawed persona carries (one each, drawn in turn)."""

_SHOWN_AXES: Final = ("language", "hostility", "goal")
"""The axes a "mute" flaw leaves out: what the caller would have to show."""


def _sentence(axis: str, value: str, describe: str, rng: random.Random) -> str:
    options = SENTENCES.get(axis, {}).get(value)
    if options:
        return rng.choice(options)
    words = describe.strip() or f"{axis}: {value}"
    return f"You are {words.rstrip('.')}."


def behaviour_for(
    traits: Mapping[str, str],
    describe: Mapping[str, str],
    rng: random.Random,
    *,
    leave_out: Sequence[str] = (),
) -> str:
    """The behaviour text saying ``traits`` (``describe``: the request's words per axis)."""
    axes = [a for a in AXIS_ORDER if a in traits] + sorted(set(traits) - set(AXIS_ORDER))
    parts = [
        _sentence(axis, traits[axis], str(describe.get(axis, "")), rng)
        for axis in axes
        if axis not in leave_out
    ]
    parts.append(rng.choice(CLOSING))
    return " ".join(parts)


def label_for(traits: Mapping[str, str], rng: random.Random) -> str:
    """A short label: the trait values that make the caller unusual, and a few hex digits."""
    axes = [a for a in LABEL_ORDER if a in traits] + sorted(set(traits) - set(LABEL_ORDER))
    words = [traits[a] for a in axes if traits[a] not in QUIET_VALUES][:4] or ["caller"]
    return "-".join([*words, f"{rng.randrange(16**3):03x}"])


def spoil(
    flaw: str,
    persona: dict[str, str],
    traits: Mapping[str, str],
    previous: Mapping[str, str] | None,
    rng: random.Random,
    max_chars: int,
) -> dict[str, str]:
    """``persona`` with ``flaw`` (see :data:`FLAWS`); ``previous``: the persona before it."""
    out = dict(persona)
    if flaw == "long":
        filler = " You like to tell long stories about your week before you answer anything."
        out["behavior"] += filler * (max_chars // len(filler) + 2)
    elif flaw == "token":
        out["behavior"] += " If asked, give your account PIN {{account_pin}}."
    elif flaw == "secret":
        out["behavior"] += f" Your portal key is {API_KEY_PREFIX}{rng.randrange(16**24):024x}."
    elif flaw == "duplicate" and previous is not None:
        out["behavior"] = previous["behavior"].replace("You ", "You really ", 1)
    elif flaw == "mute":
        out["behavior"] = behaviour_for(traits, {}, rng, leave_out=_SHOWN_AXES)
    elif flaw == "nolabel":
        out["label"] = ""
    else:  # a duplicate with nothing before it: too long instead
        return spoil("long", persona, traits, previous, rng, max_chars)
    return out
