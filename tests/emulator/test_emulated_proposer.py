"""The emulated proposer over real HTTP: failing rules in, candidate prompts from the remedies
table out (some helpful by the dialogue engine's rules, some not), seeded; prose on demand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evalkit.demo import DRAFT_INSTRUCTIONS, PROD_INSTRUCTIONS
from evalkit.emulator import EmulatorServer, serve
from evalkit.emulator._proposer_rules import GENERIC, REMEDIES, apply_remedy
from evalkit.emulator.dialogue._features import detect_features
from evalkit.emulator.dialogue._text import detect_register as language_of

FAILING = [
    {
        "rule_id": "urdu-script",
        "title": "The agent speaks in Urdu (Nastaliq) script, not Roman Urdu or English",
    },
    {
        "rule_id": "asks-confirmation",
        "title": "The agent asks the caller to confirm they will come",
        "criterion": "The agent asks a clear yes-or-no question about attending.",
    },
]


@pytest.fixture
def proposer() -> Iterator[tuple[EmulatorServer, httpx.Client]]:
    with (
        serve(time_scale=0.001, seed=5) as emu,
        httpx.Client(base_url=emu.proposer_base_url, timeout=30.0) as client,
    ):
        yield emu, client


def _request(instructions: str, k: int = 4, **extra: Any) -> dict[str, Any]:
    block = json.dumps(
        {"instructions": instructions, "failing_rules": FAILING, "candidates": k, **extra},
        ensure_ascii=False,
    )
    return {
        "model": "emulator-proposer",
        "messages": [
            {"role": "system", "content": "You improve prompts."},
            {"role": "user", "content": f"Propose.\n\n```json\n{block}\n```"},
        ],
    }


def _candidates(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    content = response.json()["choices"][0]["message"]["content"]
    found: list[dict[str, str]] = json.loads(content)["candidates"]
    return found


def test_candidates_are_remedies_of_the_failing_behaviours_seeded(
    proposer: tuple[EmulatorServer, httpx.Client],
) -> None:
    _, client = proposer
    first = _candidates(client.post("/chat/completions", json=_request(DRAFT_INSTRUCTIONS)))
    again = _candidates(client.post("/chat/completions", json=_request(DRAFT_INSTRUCTIONS)))
    assert first == again  # the same request, the same candidates
    assert len(first) == 4
    assert len({c["instructions"] for c in first}) == 4
    assert all(c["instructions"] != DRAFT_INSTRUCTIONS and c["rationale"] for c in first)
    other = _candidates(
        client.post("/chat/completions", json=_request(DRAFT_INSTRUCTIONS, round=2))
    )
    assert other != first  # another round draws again
    # every remedy the table can give for these two behaviours, and the generic ones
    pool = {
        apply_remedy(DRAFT_INSTRUCTIONS, r)
        for r in (*REMEDIES, *GENERIC)
        if r.behaviour in {"script", "confirmation", "*"}
    }
    assert {c["instructions"] for c in first} <= pool


def test_remedies_help_or_hurt_by_the_dialogue_rules() -> None:
    """A helpful remedy asks for what the dialogue engine reacts to; a harmful one removes it
    (or writes a token out); a neutral one changes no prompt feature."""
    before = detect_features(DRAFT_INSTRUCTIONS)
    for remedy in (*REMEDIES, *GENERIC):
        after = apply_remedy(DRAFT_INSTRUCTIONS, remedy)
        features = detect_features(after)
        if remedy.behaviour == "script" and remedy.kind == "helpful":
            assert language_of(after) == "ur" != language_of(DRAFT_INSTRUCTIONS)
        elif remedy.behaviour == "confirmation" and remedy.kind == "helpful":
            assert "confirm" in features - before
        elif remedy.kind == "neutral":
            assert features == before
            assert language_of(after) == language_of(DRAFT_INSTRUCTIONS)
        elif remedy.kind == "harmful" and remedy.op == "drop":
            assert features < before
        elif remedy.op == "untoken":
            assert "{{customer_name}}" not in after
    # prod's prompt already has what the helpful remedies add
    assert language_of(PROD_INSTRUCTIONS) == "ur"


def test_noop_and_prose_settings(proposer: tuple[EmulatorServer, httpx.Client]) -> None:
    emu, client = proposer
    admin = {"Authorization": f"Bearer {emu.api_key}"}
    put = httpx.put(f"{emu.admin_url}/proposer", json={"noop": True}, headers=admin)
    assert put.status_code == 200
    assert put.json()["noop"] is True
    same = _candidates(client.post("/chat/completions", json=_request(DRAFT_INSTRUCTIONS, 3)))
    assert [c["instructions"] for c in same] == [DRAFT_INSTRUCTIONS] * 3
    httpx.put(f"{emu.admin_url}/proposer", json={"malformedRate": 1.0}, headers=admin)
    prose = client.post("/chat/completions", json=_request(DRAFT_INSTRUCTIONS))
    with pytest.raises(json.JSONDecodeError, match="Expecting value"):
        json.loads(prose.json()["choices"][0]["message"]["content"])
    stats = httpx.get(f"{emu.admin_url}/stats", headers=admin).json()
    assert stats["proposerCalls"] == 2
    assert stats["proposerMalformed"] == 1
    bad = httpx.put(f"{emu.admin_url}/proposer", json={"malformedRate": 2}, headers=admin)
    assert bad.status_code == 400


def test_bad_requests(proposer: tuple[EmulatorServer, httpx.Client]) -> None:
    _, client = proposer
    assert client.post("/chat/completions", json={"messages": "x"}).status_code == 400
    no_block = {"model": "emulator-proposer", "messages": [{"role": "user", "content": "hi"}]}
    assert client.post("/chat/completions", json=no_block).status_code == 400
    wrong = {**_request("x"), "model": "gpt-9"}
    assert client.post("/chat/completions", json=wrong).status_code == 404
    assert client.get("/models").json()["data"][0]["id"] == "emulator-proposer"
