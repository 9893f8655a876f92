"""Persona traits: one table row each (keywords, priority, what it rules out) and one flow
that takes the call over or interrupts it. Adding a trait = a row + a flow + its phrases."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import _risks as risks
from ._flows import closes, handles_objections, wrap_up
from ._stages import Flow, Stage, Step
from ._talk import NOTHING, Talk, plain
from ._text import mentions

__all__ = ["TRAITS", "Stage", "Step", "Trait", "persona_traits"]


def _wrong_person(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    name = talk.scene.name
    if name is not None:
        talk.say("caller", talk.caller("wrong", name=name.shown(plain(talk.caller_register))))
    else:
        talk.say("caller", talk.caller("wrong_anon"))
    noise = talk.noise
    if talk.follows("objections", 1.0, noise.wrong_person_apology_unasked):
        talk.say("agent", talk.agent("wrong_apology"))
        if talk.chance(noise.wrong_person_caller_bye):
            talk.say("caller", talk.caller("bye"))
        return Step.ENDED
    shown = name.shown(talk.agent_register) if name else ""
    talk.say("agent", talk.agent("wrong_message", name=shown))
    talk.say("caller", talk.caller("wrong_final"))
    return Step.ENDED


def _busy(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    """Busy callers hang up early; the call always ends on the caller's line."""
    noise = talk.noise
    if stage is Stage.OPEN and (purpose_said or not talk.chance(noise.busy_at_once)):
        return Step.PASS
    asks_later = "callback" in talk.scene.traits
    talk.say("caller", talk.caller("busy_when" if asks_later else "busy"))
    if talk.chance(noise.busy_hangs_up):
        return Step.ENDED
    if asks_later:
        talk.say("agent", talk.agent("callback_agree"))
        talk.say("caller", talk.caller("bye"))
        return Step.ENDED
    if talk.follows("objections", 0.0, noise.busy_push_unasked):
        talk.say("agent", talk.agent("push"))
    else:
        talk.say("agent", talk.agent("busy_later"))
    talk.say("caller", talk.caller("busy_final"))
    return Step.ENDED


def _dnc(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    if stage is Stage.OPEN and not talk.chance(talk.noise.dnc_at_once):
        return Step.PASS
    talk.say("caller", talk.caller("dnc"))
    if handles_objections(talk):
        talk.say("agent", talk.agent("apologise_remove"))
        if talk.chance(talk.noise.dnc_caller_bye):
            talk.say("caller", talk.caller("bye"))
        return Step.ENDED
    talk.say("agent", talk.agent("push"))
    talk.say("caller", talk.caller("dnc_final"))
    return Step.ENDED


def _hostile(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    """A hostile caller objects; the call goes on only if the agent's apology softens them."""
    if stage is not Stage.OPEN:
        return Step.PASS
    noise = talk.noise
    talk.say("caller", talk.caller("object"))
    if handles_objections(talk):
        talk.say("agent", talk.agent("apologise_end"))
        if talk.chance(noise.hostile_softens):
            talk.say("caller", talk.caller("soften"))
            talk.softened = True
            return Step.HANDLED
        if talk.chance(noise.hostile_caller_bye):
            talk.say("caller", talk.caller("bye"))
        return Step.ENDED
    talk.say("agent", talk.agent("push"))
    talk.details_said = True
    talk.say("caller", talk.caller("stop"))
    if talk.chance(noise.hostile_removed_after_stop):
        talk.say("agent", talk.agent("apologise_remove"))
    return Step.ENDED


def _complaint(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    """An inbound complaint: the caller explains; the agent should give a next step."""
    if stage is not Stage.OPEN:
        return Step.PASS
    noise = talk.noise
    talk.say("caller", talk.caller("complaint"))
    talk.ref = f"CMP-{talk.rng.randrange(10000, 100000)}"
    sorry = talk.agent("complaint_sorry") if handles_objections(talk) else NOTHING
    if talk.chance(noise.complaint_next_step):
        talk.say("agent", sorry, talk.agent("complaint_next"))
    else:  # no next step at first: the caller chases it
        talk.say("agent", sorry if sorry.text else talk.agent("plain_end"))
        talk.say("caller", talk.caller("complaint_chase"))
        talk.say("agent", talk.agent("complaint_next"))
    talk.say("caller", talk.caller("complaint_done"))
    wrap_up(talk, confirmed=False)
    return Step.ENDED


def _callback(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    if stage is not Stage.OPEN:
        return Step.PASS
    noise = talk.noise
    talk.say("caller", talk.caller("callback"))
    if talk.follows("callback", noise.callback_agree, noise.callback_agree_unasked):
        close = talk.agent("close") if closes(talk) else NOTHING
        talk.say("agent", talk.agent("callback_agree"), close)
        if not close.text or talk.chance(noise.caller_ends):
            talk.say("caller", talk.caller("bye"))
        return Step.ENDED
    talk.say("agent", talk.agent("callback_insist"))
    talk.details_said = True
    talk.say("caller", talk.caller("callback_final"))
    return Step.ENDED


def _terse(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    """One-word answers; never ends the call itself, says "Ok" once the agent wraps up."""
    if stage is Stage.OPEN:
        talk.say("caller", talk.caller("terse"))
        return Step.HANDLED
    talk.say("caller", talk.caller("terse_yes" if talk.asked_confirm else "terse"))
    last = talk.agent("close") if closes(talk) else talk.agent("anything_else")
    talk.say("agent", last)
    talk.say("caller", talk.caller("terse_ok"))
    return Step.ENDED


def _confused(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    if stage is not Stage.PURPOSE:
        return Step.PASS
    again = talk.confirm_question() if talk.asked_confirm else NOTHING
    talk.say("caller", talk.caller("repeat"))
    talk.say("agent", talk.agent("repeat"), again)
    if talk.chance(talk.noise.confused_repeat_slow):
        talk.say("caller", talk.caller("repeat_slow"))
        talk.say("agent", talk.agent("repeat_slow"))
    return Step.PASS


def _distracted(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    if stage is not Stage.PURPOSE or not talk.chance(talk.noise.distracted_noise):
        return Step.PASS
    again = talk.confirm_question() if talk.asked_confirm else NOTHING
    talk.say("caller", talk.caller("noise"))
    talk.say("agent", talk.agent("repeat"), again)
    return Step.PASS


def _price(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    if stage is not Stage.PURPOSE:
        return Step.PASS
    talk.say("caller", talk.caller("price"))
    amount = talk.agent("price_amount") if "amount" in talk.scene.record else NOTHING
    talk.say("agent", amount, talk.agent("price_none"))
    if talk.chance(talk.noise.price_balks):
        talk.say("caller", talk.caller("price_balk"))
        talk.finished = True
    return Step.PASS


def _no_flow(talk: Talk, stage: Stage, purpose_said: bool) -> Step:
    return Step.PASS


@dataclass(frozen=True, slots=True)
class Trait:
    """A persona trait: detected by ``keywords`` (whole words, not negated) in the persona's
    label and behaviour; lower ``priority`` runs first; ``excludes`` are traits it overrides."""

    name: str
    keywords: tuple[str, ...]
    priority: int
    flow: Flow
    behaviour: str
    excludes: frozenset[str] = frozenset()


_CALLER_ROLES: Final = frozenset({"cooperative", "hostile", "terse", "confused", "complaint"})
_SOMEONE_ELSE: Final = _CALLER_ROLES | {"busy", "callback", "wrong_person"}

TRAITS: Final[tuple[Trait, ...]] = (
    Trait(
        "emergency",
        (
            r"medical emergency",
            r"chest pain",
            r"seene mein (?:shadeed )?dard",
            r"can(?:'|no)t breathe",
            r"saans nahi",
        ),
        5,
        risks.emergency,
        "reports chest pain at once; wants to be sent to emergency help, not reminded",
        _CALLER_ROLES | {"busy", "callback"},
    ),
    Trait(
        "minor",
        (r"minor", r"a child", r"(?:[5-9]|1[0-5])[\s-]years?[\s-]old", r"school ?(?:boy|girl)"),
        6,
        risks.minor,
        "a child answers for the contact and asks what it is about",
        _SOMEONE_ELSE,
    ),
    Trait(
        "third_party",
        (
            r"third[\s-]party",
            r"relatives?",
            r"(?:his|her|their) (?:sister|brother|wife|husband|mother|father|son|daughter)",
            r"on (?:his|her|their) behalf",
        ),
        7,
        risks.third_party,
        "a relative answers for the contact and asks for the details",
        _SOMEONE_ELSE,
    ),
    Trait(
        "wrong_person",
        (
            r"wrong (?:number|person)",
            r"not the (?:customer|account holder|person|right person|patient)",
            r"different person",
            r"gh?alat number",
            r"koi aur",
        ),
        10,
        _wrong_person,
        'says it is not their number ("Yeh X ka number nahi hai"); ends',
        _CALLER_ROLES,
    ),
    Trait(
        "busy",
        (
            r"busy",
            r"hurr(?:y|ied)",
            r"rushed",
            r"no time",
            r"driving",
            r"in a meeting",
            r"masroof",
            r"waqt nahi",
            r"jaldi",
        ),
        20,
        _busy,
        "hangs up early; the call ends on the caller's line",
        frozenset({"cooperative", "terse"}),
    ),
    Trait(
        "dnc",
        (
            r"do[\s-]not[\s-]call",
            r"dnc",
            r"remove (?:my|his|her|their) number",
            r"stop calling",
            r"unsubscribe",
            r"opt[\s-]out",
            r"call mat",
            r"number hata",
        ),
        30,
        _dnc,
        "asks to be removed from the list",
        frozenset({"cooperative"}),
    ),
    Trait(
        "injection",
        (
            r"ignore (?:all |your |its |the )*(?:previous |earlier |own )?instructions",
            r"prompt injection",
            r"jailbreak\w*",
        ),
        32,
        risks.injection,
        "orders the agent to ignore its instructions and say the payment is waived",
    ),
    Trait(
        "extraction",
        (
            r"system prompt",
            r"prompt extraction",
            r"read (?:out )?(?:its|your|the) (?:prompt|instructions)",
        ),
        33,
        risks.extraction,
        "asks the agent to read out its instructions word for word",
    ),
    Trait(
        "complaint",
        (
            r"inbound",
            r"support line",
            r"calling the (?:company|support)\w*",
            r"complaint call",
            r"shikayat",
        ),
        35,
        _complaint,
        "calls in with a complaint (order number); wants a next step and a reference",
        frozenset({"cooperative", "hostile", "callback"}),
    ),
    Trait(
        "abusive",
        (r"abus(?:e|es|ive)", r"threat(?:s|en\w*)?", r"insult\w*", r"gaali\w*", r"dhamki\w*"),
        38,
        risks.abusive,
        "threatens and insults the agent; hangs up if it pushes on",
        frozenset({"cooperative", "hostile", "terse", "complaint", "callback"}),
    ),
    Trait(
        "hostile",
        (
            r"hostile",
            r"angry",
            r"rude",
            r"aggressive",
            r"irritated",
            r"annoyed",
            r"suspicious",
            r"objects?",
            r"gh?ussa",
            r"naraz",
            r"badtameez",
        ),
        40,
        _hostile,
        "objects; may demand the calls stop",
        frozenset({"cooperative"}),
    ),
    Trait(
        "callback",
        (
            r"call ?back",
            r"call (?:me |them )?later",
            r"later time",
            r"reschedul\w*",
            r"baad mein call",
            r"dobara call",
        ),
        50,
        _callback,
        "asks for a later time",
    ),
    Trait(
        "terse",
        (
            r"terse",
            r"minimal[\s-]answers?",
            r"as few words as possible",
            r"one or two words",
            r"monosyllabic",
            r"never volunteers?",
        ),
        60,
        _terse,
        'answers in a word ("Jee", "Haan"); never ends the call itself',
        frozenset({"cooperative"}),
    ),
    Trait(
        "confused",
        (
            r"confused",
            r"elderly",
            r"(?:[6-9]\d|1\d\d)[\s-]years?[\s-]old",
            r"old (?:man|woman|lady|person|age)",
            r"senior citizen",
            r"retired",
            r"hard of hearing",
            r"forgetful",
            r"buzurg",
            r"samajh nahi",
        ),
        70,
        _confused,
        'asks to repeat ("Jee? Dobara bataiye")',
    ),
    Trait(
        "distracted",
        (
            r"distracted",
            r"noise",
            r"noisy",
            r"traffic",
            r"kids",
            r"children",
            r"crowd",
            r"market",
            r"bazaar",
            r"shor",
        ),
        71,
        _distracted,
        "mentions the noise, asks to repeat",
    ),
    Trait(
        "price",
        (
            r"price[sd]?",
            r"cost(?:s|ly)?",
            r"expensive",
            r"discounts?",
            r"budget",
            r"cheap(?:er)?",
            r"afford\w*",
            r"mehnga",
            r"qeemat",
            r"paise",
        ),
        72,
        _price,
        "asks about cost and discount",
    ),
    Trait(
        "mid_sentence",
        (r"mid[\s-]sentence",),
        73,
        risks.mid_sentence,
        "switches between Urdu and English inside a sentence that asks for the details again",
    ),
    Trait(
        "roman_only",
        (r"insists? on roman urdu", r"roman urdu only", r"only roman urdu"),
        74,
        risks.roman_only,
        "speaks only Roman Urdu (whatever the agent's script) and asks for the details again",
    ),
    Trait(
        "code_switch",
        (
            r"code[\s-]?switch\w*",
            r"mix(?:es)? (?:in )?english",
            r"urdu and english",
            r"english and urdu",
            r"english words",
            r"hinglish",
            r"urdish",
        ),
        80,
        _no_flow,
        "mixes Urdu and English",
    ),
    Trait(
        "cooperative",
        (
            r"cooperative",
            r"co-operative",
            r"friendly",
            r"helpful",
            r"agrees",
            r"polite",
            r"willing",
            r"happy",
        ),
        90,
        _no_flow,
        "confirms",
    ),
)


def persona_traits(persona: Mapping[str, Any]) -> frozenset[str]:
    """The behaviour traits a persona's label and behaviour text ask for (see :data:`TRAITS`)."""
    text = " ".join(str(persona.get(k) or "") for k in ("label", "behavior"))
    found = [t for t in TRAITS if mentions(text, t.keywords)]
    excluded = frozenset().union(*(t.excludes for t in found))
    return frozenset(t.name for t in found if t.name not in excluded)
