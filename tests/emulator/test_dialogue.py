"""The scripted dialogue engine: determinism, shape, language, variables, rules and personas."""

from __future__ import annotations

import asyncio
import itertools
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from evalkit.emulator import dialogue
from evalkit.emulator.dialogue import (
    ConversationSetup,
    ScriptedBackend,
    Utterance,
    detect_register,
    persona_traits,
    plan_conversation,
    recognise_acts,
    substitute_variables,
)
from evalkit.emulator.dialogue._data import load

RECORD = {"name": "Ayesha Khan", "date": "12 March", "time": "4:00 PM", "amount": "Rs 3,500"}
RU_PROMPT = (
    "You are Sara from City Clinic. Speak Urdu. Remind {{name}} about the appointment on "
    "{{date}} at {{time}} and ask them to confirm with a yes or no. If they object or ask not to "
    "be called, apologise and end politely. Thank them and say Allah hafiz at the end."
)
UR_PROMPT = RU_PROMPT.replace("Speak Urdu.", "Speak Urdu and always write in Nastaliq script.")
EN_PROMPT = (
    "You are Sam from Acme Bank. Remind {{name}} that the payment of {{amount}} is due on "
    "{{date}}. Ask them to confirm with a yes or no. Close with a thank you and goodbye."
)
SEEDS = range(200)


def config(instructions: str = RU_PROMPT, **agent: Any) -> dict[str, Any]:
    return {"agent": {"instructions": instructions, **agent}}


def setup(
    cfg: Mapping[str, Any] | None = None,
    behavior: str = "",
    context: str | None = "Expecting a reminder from the clinic",
    variables: Mapping[str, Any] | None = RECORD,
    seed: int = 0,
) -> ConversationSetup:
    return ConversationSetup(
        config=cfg if cfg is not None else config(),
        persona={"label": "test", "behavior": behavior, "path": "negative"},
        context=context,
        variables=variables,
        seed=seed,
    )


def agent_text(conv: list[Utterance]) -> str:
    return " ".join(u.text for u in conv if u.role == "agent")


def caller_text(conv: list[Utterance]) -> str:
    return " ".join(u.text for u in conv if u.role == "caller")


def rate(predicate: Callable[[list[Utterance]], bool], **kwargs: Any) -> float:
    hits = sum(predicate(plan_conversation(setup(seed=s, **kwargs))) for s in SEEDS)
    return hits / len(SEEDS)


def arabic_share(text: str) -> float:
    arabic = len(re.findall(r"[\u0600-\u06ff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return arabic / (arabic + latin) if arabic + latin else 0.0


# --- the backend contract -------------------------------------------------------------------


def test_backend_yields_the_planned_conversation() -> None:
    async def collect() -> list[Utterance]:
        return [u async for u in ScriptedBackend(max_turns=10).conversation(setup(seed=5))]

    assert asyncio.run(collect()) == plan_conversation(setup(seed=5), 10)


@pytest.mark.parametrize("max_turns", [0, 1])
def test_max_turns_below_two_is_refused(max_turns: int) -> None:
    with pytest.raises(ValueError, match="max_turns"):
        ScriptedBackend(max_turns=max_turns)


@pytest.mark.parametrize("behavior", ["", "busy", "hostile and angry", "elderly, confused"])
def test_same_seed_gives_the_same_conversation(behavior: str) -> None:
    first = plan_conversation(setup(behavior=behavior, seed=42))
    assert plan_conversation(setup(behavior=behavior, seed=42)) == first


@pytest.mark.parametrize("behavior", ["", "cooperative", "elderly, confused", "price sensitive"])
def test_different_seeds_usually_differ(behavior: str) -> None:
    conversations = {tuple(plan_conversation(setup(behavior=behavior, seed=s))) for s in range(20)}
    assert len(conversations) >= 12


@pytest.mark.parametrize("max_turns", [2, 3, 5, 16])
@pytest.mark.parametrize("prompt", [RU_PROMPT, UR_PROMPT, EN_PROMPT, "Call them."])
@pytest.mark.parametrize("greeting", [True, False])
def test_conversations_alternate_within_bounds(max_turns: int, prompt: str, greeting: bool) -> None:
    behaviors = ["", "busy", "hostile", "confused", "wrong number", "call back later", "dnc"]
    for seed in range(30):
        cfg = config(prompt, initialGreeting=greeting)
        conv = plan_conversation(setup(cfg, behaviors[seed % len(behaviors)], seed=seed), max_turns)
        assert 2 <= len(conv) <= max_turns
        assert all(u.text.strip() for u in conv)
        assert all(a.role != b.role for a, b in itertools.pairwise(conv))


def test_every_phrase_bank_covers_all_registers_and_slots() -> None:
    names = ("name", "agent", "org", "details", "echo", "when", "amount", "order", "ref", "prompt")
    slots = {name: "x" for name in names} | {"label": "x", "token": "x"}
    slots |= load("language")["gender"]["f"]
    known_acts = {a.name for a in dialogue.ACTS}
    for side in ("agent", "caller"):
        for kind, bank in load(side).items():
            assert {"en", "ru", "ur"} <= set(bank), (side, kind)
            assert set(bank["acts"]) <= known_acts, (side, kind)
            for register, options in bank.items():
                if register == "acts":
                    continue
                for template in options:
                    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
                    assert fields <= set(slots), template
                    assert template.format_map(slots)


# --- greeting -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "hello"),
    [(EN_PROMPT, r"^(Hello|Hi|Yes)"), (RU_PROMPT, r"^(Haan ji|Hello|Jee)"), (UR_PROMPT, "ہیلو|جی")],
)
def test_caller_speaks_first_without_initial_greeting(prompt: str, hello: str) -> None:
    for seed in range(20):
        conv = plan_conversation(setup(config(prompt), seed=seed))
        assert conv[0].role == "caller"
        assert re.search(hello, conv[0].text)


def test_greeting_instructions_are_ignored_when_greeting_is_off() -> None:
    cfg = config(RU_PROMPT, initialGreeting=False, greetingInstructions='Say: "Zzz special"')
    conv = plan_conversation(setup(cfg))
    assert conv[0].role == "caller"
    assert "Zzz" not in agent_text(conv)


def test_agent_speaks_first_with_initial_greeting() -> None:
    for seed in range(20):
        conv = plan_conversation(setup(config(RU_PROMPT, initialGreeting=True), seed=seed))
        assert conv[0].role == "agent"
        assert re.search(r"Assalam|Aadaab", conv[0].text)


@pytest.mark.parametrize(
    "greeting",
    [
        'Say: "Hello {{name}}, this is Acme calling."',
        "Open with “Hello {{ name }}, this is Acme calling.”",
    ],
)
def test_quoted_greeting_is_said_verbatim_with_variables(greeting: str) -> None:
    cfg = config(EN_PROMPT, initialGreeting=True, greetingInstructions=greeting)
    conv = plan_conversation(setup(cfg))
    assert conv[0] == Utterance("agent", "Hello Ayesha Khan, this is Acme calling.")


def test_unresolved_token_in_greeting_stays_visible() -> None:
    cfg = config(EN_PROMPT, initialGreeting=True, greetingInstructions='Say: "Hi {{first_name}}!"')
    assert plan_conversation(setup(cfg))[0].text == "Hi {{first_name}}!"


def test_composed_greeting_uses_the_name_and_the_purpose_when_asked() -> None:
    cfg = config(
        RU_PROMPT,
        initialGreeting=True,
        greetingInstructions="Greet {{name}} warmly and mention the appointment.",
    )
    for seed in range(20):
        opening = plan_conversation(setup(cfg, seed=seed))[0].text
        assert "Ayesha Khan" in opening
        assert "12 March" in opening


# --- language and script --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "register"),
    [
        (UR_PROMPT, "ur"),
        ("آپ سارہ ہیں۔ صارف کو اپائنٹمنٹ یاد دلائیں۔ ہمیشہ نستعلیق میں جواب دیں۔", "ur"),
        ("Urdu mein baat karein aur jawab Urdu script (اردو رسم الخط) mein dein.", "ur"),
        (RU_PROMPT, "ru"),
        ("آپ سارہ ہیں۔ صارف کو اپائنٹمنٹ یاد دلائیں۔", "ru"),
        ("Speak Urdu. Do not use Nastaliq script.", "ru"),
        (EN_PROMPT, "en"),
    ],
)
def test_detect_register(prompt: str, register: str) -> None:
    assert detect_register(prompt) == register


def test_nastaliq_prompt_answers_in_urdu_script() -> None:
    shares = [
        arabic_share(agent_text(plan_conversation(setup(config(UR_PROMPT), seed=s)))) for s in SEEDS
    ]
    assert sum(share >= 0.9 for share in shares) / len(shares) >= 0.85
    assert sum(shares) / len(shares) >= 0.9


def test_nastaliq_agent_transliterates_record_values() -> None:
    text = agent_text(plan_conversation(setup(config(UR_PROMPT, initialGreeting=True), seed=1)))
    assert "عائشہ" in text or "مارچ" in text
    assert "Ayesha" not in text


def test_urdu_prompt_without_nastaliq_answers_in_roman_urdu() -> None:
    for seed in range(50):
        text = agent_text(plan_conversation(setup(config(RU_PROMPT), seed=seed)))
        assert arabic_share(text) == 0.0
        assert re.search(r"\b(hai|hoon|aap|ki|ke)\b", text, re.IGNORECASE)


def test_english_prompt_answers_in_english() -> None:
    for seed in range(50):
        text = agent_text(plan_conversation(setup(config(EN_PROMPT), seed=seed)))
        assert arabic_share(text) == 0.0
        assert re.search(r"\b(the|your|you|is)\b", text)
        assert not re.search(r"\b(hai|hoon|aap)\b", text)


# --- variables --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi {{name}}", "Hi Ayesha Khan"),
        ("Hi {{ name }}!", "Hi Ayesha Khan!"),
        ("Due {{due_date}}", "Due {{due_date}}"),
        ("Due {{ due_date }}", "Due {{ due_date }}"),
        ("{{count}} items, vip={{vip}}", "3 items, vip=true"),
        ("{{missing}} and {single}", "{{missing}} and {single}"),
        ("{{empty}}|{{none}}", "{{empty}}|{{none}}"),
    ],
)
def test_substitute_variables(text: str, expected: str) -> None:
    record = {**RECORD, "count": 3, "vip": True, "empty": "", "none": None}
    assert substitute_variables(text, record) == expected


def test_agent_states_the_record_values_the_prompt_refers_to() -> None:
    def states_all(conv: list[Utterance]) -> bool:
        text = agent_text(conv)
        return all(v in text for v in ("Ayesha Khan", "12 March", "4:00 PM"))

    assert rate(states_all) >= 0.85


def test_agent_uses_values_named_by_key_words_without_tokens() -> None:
    cfg = config(
        "Speak Urdu. Remind the customer about their appointment date and time. Confirm it."
    )
    record = {"customer_name": "Bilal", "appointment_date": "5 June", "appointment_time": "10 AM"}
    text = agent_text(plan_conversation(setup(cfg, variables=record, seed=3)))
    assert "5 June" in text
    assert "10 AM" in text


def test_unresolved_token_is_said_verbatim() -> None:
    cfg = config(EN_PROMPT + " Mention the late fee due on {{due_date}}.")
    assert rate(lambda c: "{{due_date}}" in agent_text(c), cfg=cfg) >= 0.9


def test_caller_often_questions_an_unresolved_token() -> None:
    cfg = config(EN_PROMPT, initialGreeting=False)
    record = {"name": "Ayesha Khan", "date": "12 March"}  # {{amount}} has no value
    assert rate(lambda c: "{{amount}}" in caller_text(c), cfg=cfg, variables=record) >= 0.4


# --- instruction rules ------------------------------------------------------------------------

ASKS_YES_NO = re.compile(r"yes or no|haan ya nahi", re.IGNORECASE)


def test_confirm_rule_drives_confirmation_with_noise() -> None:
    with_rule = rate(lambda c: bool(ASKS_YES_NO.search(agent_text(c))))
    without = rate(
        lambda c: bool(ASKS_YES_NO.search(agent_text(c))),
        cfg=config(RU_PROMPT.replace(" and ask them to confirm with a yes or no", "")),
    )
    assert 0.8 <= with_rule < 1.0
    assert 0.0 < without <= 0.25


def test_vague_prompt_confirms_less_often() -> None:
    vague = config("Speak Urdu. Confirm the appointment.")
    detailed = rate(lambda c: bool(ASKS_YES_NO.search(agent_text(c))))
    assert rate(lambda c: bool(ASKS_YES_NO.search(agent_text(c))), cfg=vague) < detailed - 0.15


APOLOGY = re.compile(r"maazrat|maafi|sorry|apologi", re.IGNORECASE)


@pytest.mark.parametrize("behavior", ["hostile and rude", "asks to be put on the do not call list"])
def test_objection_rule_makes_the_agent_apologise(behavior: str) -> None:
    without_rule = config(
        RU_PROMPT.replace(
            "If they object or ask not to be called, apologise and end politely. ", ""
        )
    )
    handled = rate(lambda c: bool(APOLOGY.search(agent_text(c))), behavior=behavior)
    unhandled = rate(
        lambda c: bool(APOLOGY.search(agent_text(c))), behavior=behavior, cfg=without_rule
    )
    assert handled >= 0.8
    assert unhandled <= 0.45
    assert handled - unhandled >= 0.4


CLOSE = re.compile(r"allah hafiz|khuda hafiz|shukriya", re.IGNORECASE)


def test_closing_rule_makes_the_agent_close_politely() -> None:
    without_rule = config(RU_PROMPT.replace(" Thank them and say Allah hafiz at the end.", ""))
    closes = rate(lambda c: bool(CLOSE.search(agent_text(c))), behavior="cooperative")
    rarely = rate(
        lambda c: bool(CLOSE.search(agent_text(c))), behavior="cooperative", cfg=without_rule
    )
    assert closes >= 0.8
    assert rarely <= 0.5


# --- personas ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behavior", "traits"),
    [
        ("Busy professional, in a hurry", {"busy"}),
        ("Not busy at all, friendly and cooperative", {"cooperative"}),
        ("A 25-year-old student", set()),
        ("Elderly man, hard of hearing", {"confused"}),
        ("Masroof hai, gussa karta hai", {"busy", "hostile"}),
        ("Wrong number: not the customer", {"wrong_person"}),
        ("Mixes English words into Urdu, noisy market around", {"code_switch", "distracted"}),
        ("Wants a discount, asks to call back later", {"price", "callback"}),
        ("Stop calling me, DNC", {"dnc"}),
    ],
)
def test_persona_traits(behavior: str, traits: set[str]) -> None:
    assert persona_traits({"behavior": behavior}) == traits


PERSONA_CASES = [
    (
        "Busy, in a meeting",
        lambda c: bool(re.search(r"busy|meeting|waqt nahi|drive", caller_text(c), re.I)),
        1.0,
    ),
    (
        "Hostile and irritated",
        lambda c: bool(
            re.search(r"dilchaspi|kyun call|number aap ko|in baaton", caller_text(c), re.I)
        ),
        1.0,
    ),
    (
        "Elderly and confused",
        lambda c: bool(re.search(r"dobara bataiye|samajh nahi", caller_text(c), re.I)),
        1.0,
    ),
    (
        "Wrong number",
        lambda c: bool(
            re.search(
                r"Ayesha Khan ka number nahi|ghalat number|Ayesha Khan nahi", caller_text(c), re.I
            )
        ),
        1.0,
    ),
    (
        "Asks for a callback later",
        lambda c: bool(re.search(r"call kar sakte|baat kar sakte", caller_text(c), re.I)),
        1.0,
    ),
    (
        "Do not call; wants to be removed",
        lambda c: bool(re.search(r"list se|call na karein|call mat", caller_text(c), re.I)),
        1.0,
    ),
    (
        "Price sensitive",
        lambda c: bool(re.search(r"kharcha|discount|cost", caller_text(c), re.I)),
        0.95,
    ),
    (
        "Distracted, noisy background traffic",
        lambda c: bool(re.search(r"shor|noise", caller_text(c), re.I)),
        0.7,
    ),
    (
        "Cooperative and friendly",
        lambda c: bool(re.search(r"jee haan|haan ji", caller_text(c), re.I)),
        0.75,
    ),
]


@pytest.mark.parametrize(
    ("behavior", "predicate", "minimum"), PERSONA_CASES, ids=[c[0] for c in PERSONA_CASES]
)
def test_persona_behaviour(
    behavior: str, predicate: Callable[[list[Utterance]], bool], minimum: float
) -> None:
    assert rate(predicate, behavior=behavior) >= minimum


def caller_acts(conv: list[Utterance]) -> list[frozenset[str]]:
    """What each caller turn does, read off its words (not off the phrase bank's wording)."""
    return [recognise_acts(u.text, "caller") for u in conv if u.role == "caller"]


def test_busy_callers_hang_up_early_on_their_own_line() -> None:
    convs = [plan_conversation(setup(behavior="busy", seed=seed)) for seed in SEEDS]
    for conv in convs:
        assert conv[-1].role == "caller"
        assert len(conv) <= 7
    # they say they are busy within their first two turns, in most calls
    assert rate(lambda c: any("busy" in acts for acts in caller_acts(c)[:2]), behavior="busy") > 0.5


def test_hostile_callers_may_demand_the_calls_stop() -> None:
    cfg = config(
        RU_PROMPT.replace(
            "If they object or ask not to be called, apologise and end politely. ", ""
        )
    )
    assert rate(lambda c: "mat" in caller_text(c), behavior="hostile", cfg=cfg) >= 0.5


def test_code_switching_caller_mixes_languages() -> None:
    def mixes(conv: list[Utterance]) -> bool:
        text = caller_text(conv)
        english = re.search(r"\b(sorry|please|yes|okay|the|what|I|is|thank)\b", text, re.I)
        urdu = re.search(r"\b(hai|hoon|jee|ji|bataiye|theek|nahi|kar|mein|haan)\b", text, re.I)
        return bool(english and urdu)

    assert rate(mixes, behavior="Code-switches between Urdu and English") >= 0.9


def test_caller_answers_to_the_record_name() -> None:
    cfg = config(RU_PROMPT + " Verify you are speaking with the right person first.")
    convs = [plan_conversation(setup(cfg, behavior="cooperative", seed=s)) for s in SEEDS]
    # every caller turn that answers the agent asking for the record's person names that person
    answers = [
        reply
        for conv in convs
        for asked, reply in itertools.pairwise(conv)
        if asked.role == "agent" and "asks_identity" in recognise_acts(asked.text)
    ]
    assert len(answers) >= 100
    assert all(reply.role == "caller" and "Ayesha Khan" in reply.text for reply in answers)


def test_cold_call_without_context_or_variables() -> None:
    def asks_who(conv: list[Utterance]) -> bool:
        return any("asks_who" in acts for acts in caller_acts(conv))

    cold = rate(asks_who, context=None, variables=None)
    warm = rate(asks_who)
    assert cold >= 0.9
    assert warm <= 0.05


def test_context_makes_the_caller_recognise_the_call() -> None:
    recognised = re.compile(r"yaad hai|pata tha")
    assert rate(lambda c: bool(recognised.search(caller_text(c)))) >= 0.3
    assert rate(lambda c: bool(recognised.search(caller_text(c))), context=None) == 0.0


@pytest.mark.parametrize("prompt", [RU_PROMPT, UR_PROMPT, EN_PROMPT])
def test_caller_often_ends_the_call(prompt: str) -> None:
    share = rate(lambda c: c[-1].role == "caller", cfg=config(prompt))
    assert 0.4 <= share < 1.0


@pytest.mark.parametrize(
    ("prompt", "record", "expected"),
    [
        (
            "Speak Urdu. Remind {{name}} that {{amount}} is due on {{date}}.",
            RECORD,
            ["Rs 3,500", "12 March"],
        ),
        (
            "Tell {{name}} their order {{order_id}} arrives on {{date}}.",
            {**RECORD, "order_id": "A-77"},
            ["A-77"],
        ),
        ("Tell {{name}} the subscription expires on {{date}}.", RECORD, ["12 March"]),
        (
            "Tell {{name}} their policy number is {{policy_number}}.",
            {**RECORD, "policy_number": "P-9"},
            ["P-9"],
        ),
    ],
)
def test_topics_state_their_values(
    prompt: str, record: dict[str, str], expected: list[str]
) -> None:
    text = agent_text(plan_conversation(setup(config(prompt), variables=record, seed=2)))
    for value in expected:
        assert value in text
