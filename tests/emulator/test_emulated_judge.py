"""The emulated judge over real HTTP: the judge prompt in, verdicts from recognised acts out,
seeded noise whose flip rate a disagreement measurement recovers."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from evalkit.emulator import EmulatorServer, serve
from evalkit.emulator._judge import ACT_PHRASES, RULE_ACTS, decide
from evalkit.emulator.dialogue import ConversationSetup, plan_conversation

from .test_dialogue import RECORD, RU_PROMPT, config

RULES = [
    {"rule_id": "greet", "title": "Introduces itself", "criterion": "States its identity"},
    {"rule_id": "purpose", "title": "States the purpose", "criterion": None},
    {"rule_id": "confirm", "title": "Confirmation", "criterion": "Asks to confirm, yes or no"},
    {"rule_id": "close", "title": "Polite close", "criterion": "Says goodbye or thanks"},
    {"rule_id": "dnc", "title": "Honours do-not-call", "criterion": "Removes the number"},
    {"rule_id": "vibe", "title": "Sounds warm", "criterion": "Tone is empathetic"},
]


@pytest.fixture
def judge() -> Iterator[tuple[EmulatorServer, httpx.Client]]:
    with (
        serve(time_scale=0.001, seed=3) as emu,
        httpx.Client(base_url=emu.judge_base_url, timeout=30.0) as client,
    ):
        yield emu, client


NO_CONFIRM = RU_PROMPT.replace(" and ask them to confirm with a yes or no", "")


def _transcript(behavior: str, seed: int, prompt: str = RU_PROMPT) -> list[dict[str, Any]]:
    setup = ConversationSetup(config(prompt), {"behavior": behavior}, "ctx", RECORD, seed)
    return [
        {"turn": i, "role": u.role, "text": u.text}
        for i, u in enumerate(plan_conversation(setup), start=1)
    ]


def _request(transcript: list[dict[str, Any]], rules: list[dict[str, Any]], **extra: Any) -> Any:
    block = json.dumps({"transcript": transcript, "rules": rules}, ensure_ascii=False)
    messages = [
        {"role": "system", "content": "You are a strict judge."},
        {"role": "user", "content": f"Judge this call.\n\n```json\n{block}\n```"},
    ]
    return {"model": "emulator-judge", "messages": messages, "temperature": 0, **extra}


def _verdicts(client: httpx.Client, body: Any) -> dict[str, dict[str, Any]]:
    response = client.post("/chat/completions", json=body)
    assert response.status_code == 200, response.text
    content = response.json()["choices"][0]["message"]["content"]
    return {v["rule_id"]: v for v in json.loads(content)["verdicts"]}


def test_models_lists_the_emulator_judge(judge: tuple[EmulatorServer, httpx.Client]) -> None:
    _, client = judge
    ids = [m["id"] for m in client.get("/models").json()["data"]]
    assert ids == ["emulator-judge", "exact"]  # exact: the same judge without noise


@pytest.mark.parametrize(
    "response_format",
    [None, {"type": "json_object"}, {"type": "json_schema", "json_schema": {"name": "v"}}],
)
def test_verdicts_follow_the_acts_in_the_agent_turns(
    judge: tuple[EmulatorServer, httpx.Client], response_format: Any
) -> None:
    _, client = judge
    transcript = _transcript("asks to be put on the do not call list", 1)
    extra = {"response_format": response_format} if response_format else {}
    response = client.post("/chat/completions", json=_request(transcript, RULES, **extra))
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["usage"]["prompt_tokens"] > 0 < body["usage"]["completion_tokens"]
    verdicts = {
        v["rule_id"]: v for v in json.loads(body["choices"][0]["message"]["content"])["verdicts"]
    }
    assert list(verdicts) == [r["rule_id"] for r in RULES]
    assert verdicts["vibe"]["verdict"] == "na"
    assert "cannot map" in verdicts["vibe"]["reason"]
    for verdict in verdicts.values():
        if verdict["verdict"] == "pass" and verdict["evidence_turn"] is not None:
            turn = transcript[verdict["evidence_turn"] - 1]
            assert turn["role"] == "agent"


def test_do_not_call_is_na_when_the_caller_never_asked(
    judge: tuple[EmulatorServer, httpx.Client],
) -> None:
    _, client = judge
    verdicts = _verdicts(client, _request(_transcript("cooperative", 2), RULES))
    assert verdicts["dnc"]["verdict"] == "na"
    assert "does not apply" in verdicts["dnc"]["reason"]


def test_pass_and_fail_both_occur_and_agree_with_the_text(
    judge: tuple[EmulatorServer, httpx.Client],
) -> None:
    _, client = judge
    seen = set()
    for seed in range(30):
        transcript = _transcript("cooperative", seed, (RU_PROMPT, NO_CONFIRM)[seed % 2])
        verdict = _verdicts(client, _request(transcript, RULES[2:3]))["confirm"]
        said = " ".join(t["text"] for t in transcript if t["role"] == "agent")
        assert (verdict["verdict"] == "pass") == bool(
            "yes or no" in said.lower() or "haan ya nahi" in said.lower()
        )
        seen.add(verdict["verdict"])
    assert seen == {"pass", "fail"}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"messages": [{"role": "user", "content": "no block here"}]}, 400),
        ({"messages": [{"role": "user", "content": "```json\n{not json\n```"}]}, 400),
        ({"model": "gpt-x", "messages": []}, 404),
        ({"messages": "nope"}, 400),
    ],
)
def test_bad_requests_get_openai_errors(
    judge: tuple[EmulatorServer, httpx.Client], body: Any, status: int
) -> None:
    _, client = judge
    response = client.post("/chat/completions", json=body, headers={"Authorization": "Bearer x"})
    assert response.status_code == status
    assert "message" in response.json()["error"]


def test_settings_and_stats(judge: tuple[EmulatorServer, httpx.Client]) -> None:
    emu, client = judge
    assert emu.admin("GET", "/judge")["flipRate"] == 0.0
    with pytest.raises(httpx.HTTPStatusError):
        emu.admin("PUT", "/judge", {"flipRate": 2})
    emu.admin("PUT", "/judge", {"malformedRate": 1.0, "seed": 1})
    response = client.post("/chat/completions", json=_request(_transcript("", 1), RULES))
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.json()["choices"][0]["message"]["content"])
    stats = emu.stats()
    assert stats["judgeCalls"] == 1
    assert stats["judgeMalformed"] == 1


@pytest.mark.slow
def test_flip_rate_is_recovered_by_measured_disagreement(
    judge: tuple[EmulatorServer, httpx.Client],
) -> None:
    emu, client = judge
    behaviours = ["cooperative", "hostile", "busy", "asks to call back later", "elderly"]
    bodies = [
        _request(_transcript(behaviours[s % 5], s), RULES[:4]) for s in range(125)
    ]  # 500 rule decisions
    emu.admin("PUT", "/judge", {"flipRate": 0.0})
    clean = [_verdicts(client, b) for b in bodies]
    emu.admin("PUT", "/judge", {"flipRate": 0.2, "seed": 99})
    noisy = [_verdicts(client, b) for b in bodies]
    pairs = [
        (c[r]["verdict"], n[r]["verdict"])
        for c, n in zip(clean, noisy, strict=True)
        for r in c
        if c[r]["verdict"] in ("pass", "fail")
    ]
    n = len(pairs)
    disagreement = sum(a != b for a, b in pairs) / n
    half_width = 3 * math.sqrt(0.2 * 0.8 / n)
    assert n >= 400
    assert abs(disagreement - 0.2) <= half_width
    assert emu.stats()["judgeCalls"] == 250


SCORECARDS = sorted((Path(__file__).parents[2] / "scorecards").glob("*.yaml"))


def _judged_rules() -> list[tuple[str, str, str | None]]:
    """(rule id, title, criterion) of every judged rule of the bundled scorecards."""
    out = []
    for path in SCORECARDS:
        for rule in yaml.safe_load(path.read_text(encoding="utf-8"))["rules"]:
            check = rule.get("check") or {"type": "judge"}
            if check["type"] == "judge":
                out.append((rule["ruleId"], rule["title"], check.get("criterion")))
    return out


def test_rationales_speak_of_the_rule_in_words() -> None:
    """The issue's example: a date-and-time rule's rationale spoke of "purpose", and act names
    such as ``says_wrong_person`` leaked into what a reviewer reads."""
    rules = _judged_rules()
    assert len(rules) >= 8
    behaviours = [
        "cooperative",
        "hostile",
        "busy",
        "wrong person",
        "asks to be put on the do not call list",
    ]
    verdicts: Counter[str] = Counter()
    for seed, behaviour in enumerate(behaviours * 2):
        transcript = _transcript(behaviour, seed)
        for rule_id, title, criterion in rules:
            verdict, reason, _ = decide(transcript, title, criterion)
            verdicts[verdict] += 1
            assert "_" not in reason, (rule_id, reason)  # no act name (says_wrong_person)
            row = next((r for r in RULE_ACTS if any(k in title.lower() for k in r.keywords)), None)
            if verdict in ("pass", "fail") and row is not None:
                assert row.phrase in reason, (rule_id, reason)
    assert set(verdicts) == {"pass", "fail", "na"}


def test_a_date_and_time_rule_speaks_of_the_date_and_time() -> None:
    transcript = _transcript("cooperative", 1)
    title = "The agent states the appointment date and time from the record"
    verdict, reason, turn = decide(transcript, title, None)
    assert verdict == "pass"
    assert reason == f"in turn {turn} the agent states the appointment's date and time"
    assert "purpose" not in reason


@pytest.mark.parametrize(
    ("title", "caller_acts"),
    [
        ("Honours do-not-call", ["requests_dnc"]),
        ("Apologises to the wrong person", ["says_wrong_person"]),
        ("Offers a call back at a later time", ["busy", "requests_callback"]),
    ],
)
def test_a_rule_that_does_not_apply_names_what_the_caller_never_did(
    title: str, caller_acts: list[str]
) -> None:
    verdict, reason, _ = decide([{"turn": 1, "role": "agent", "text": "Hello"}], title, None)
    assert verdict == "na"
    assert reason.startswith("does not apply: the caller never ")
    for act in caller_acts:
        assert ACT_PHRASES[act] in reason
    assert "_" not in reason


def test_a_biased_judge_errs_in_a_known_seeded_direction_and_exact_stays_exact(
    judge: tuple[EmulatorServer, httpx.Client],
) -> None:
    emu, client = judge
    behaviours = ["cooperative", "hostile", "busy", "asks to call back later", "elderly"]
    bodies = [_request(_transcript(behaviours[s % 5], s), RULES[:4]) for s in range(60)]
    truth = [_verdicts(client, {**b, "model": "exact"}) for b in bodies]
    settings = {"falsePassRate": 0.5, "falseFailRate": 0.1, "rules": ["confirm", "close"]}
    echoed = emu.admin("PUT", "/judge", {**settings, "seed": 5})
    assert echoed["falsePassRate"] == 0.5
    assert echoed["rules"] == ["confirm", "close"]
    biased = [_verdicts(client, b) for b in bodies]
    again = [_verdicts(client, b) for b in reversed(bodies)][::-1]
    assert biased == again  # fixed by seed, transcript and rule, not by call order
    exact = [_verdicts(client, {**b, "model": "exact"}) for b in bodies]
    assert exact == truth  # model exact ignores the errors
    counts: Counter[tuple[str, str, str]] = Counter()
    for t, b in zip(truth, biased, strict=True):
        for rule in t:
            counts[(rule, t[rule]["verdict"], b[rule]["verdict"])] += 1
    # rules outside ``rules`` are never wrong
    assert all(said == true for (rule, true, said) in counts if rule in ("greet", "purpose"))
    fails = sum(n for (r, t, _), n in counts.items() if r in ("confirm", "close") and t == "fail")
    false_pass = sum(
        n
        for (r, t, s), n in counts.items()
        if r in ("confirm", "close") and (t, s) == ("fail", "pass")
    )
    assert fails >= 20
    assert abs(false_pass / fails - 0.5) <= 3 * math.sqrt(0.25 / fails)
    other = emu.admin("PUT", "/judge", {**settings, "seed": 6})
    assert other["seed"] == 6
    assert [_verdicts(client, b) for b in bodies] != biased  # another seed, other errors
    with pytest.raises(httpx.HTTPStatusError):
        emu.admin("PUT", "/judge", {"falsePassRate": -0.1})
    with pytest.raises(httpx.HTTPStatusError):
        emu.admin("PUT", "/judge", {"rules": "confirm"})
    models = client.get("/models").json()["data"]
    assert {m["id"] for m in models} == {"emulator-judge", "exact"}
