"""The OpenAI-compatible LLM dialogue backend, against an in-process fake (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from evalkit.emulator._llm_backend import LlmBackend, LlmBackendError
from evalkit.emulator.dialogue import ConversationSetup, Utterance

KEY = "sk-test-SECRET-0123456789"
BASE = "http://llm.test/v1"
RECORD = {"name": "Ayesha Khan", "date": "12 March"}


def setup(
    greeting: bool = False, context: str | None = "Expecting a reminder"
) -> ConversationSetup:
    agent: dict[str, Any] = {"instructions": "Remind {{name}} about {{date}}. Missing: {{nope}}."}
    if greeting:
        agent |= {"initialGreeting": True, "greetingInstructions": "Greet {{name}} warmly."}
    return ConversationSetup(
        config={"agent": agent},
        persona={"label": "Busy mum", "behavior": "You are busy and hang up quickly."},
        context=context,
        variables=RECORD,
        seed=1234,
    )


class FakeChat:
    """An OpenAI-shaped chat-completions server: scripted replies per side."""

    def __init__(
        self, agent: list[str], caller: list[str], status: int = 200, raw: Any = None
    ) -> None:
        self.replies = {"agent": list(agent), "caller": list(caller)}
        self.requests: list[dict[str, Any]] = []
        self.headers: list[httpx.Headers] = []
        self.status = status
        self.raw = raw

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.method == "POST"
        assert request.url == f"{BASE}/chat/completions"
        body = json.loads(request.content)
        self.requests.append(body)
        self.headers.append(request.headers)
        if self.status != 200:
            return httpx.Response(self.status, text=f"upstream broke for key {KEY}")
        if self.raw is not None:
            return httpx.Response(200, json=self.raw)
        side = "caller" if "role-playing" in body["messages"][0]["content"] else "agent"
        content = self.replies[side].pop(0)
        return httpx.Response(
            200,
            json={"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]},
        )

    def side_of(self, request: dict[str, Any]) -> str:
        return "caller" if "role-playing" in request["messages"][0]["content"] else "agent"


def run(backend: LlmBackend, conversation_setup: ConversationSetup) -> list[Utterance]:
    async def collect() -> list[Utterance]:
        return [u async for u in backend.conversation(conversation_setup)]

    return asyncio.run(collect())


def backend_for(fake: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> LlmBackend:
    return LlmBackend(
        BASE, "tiny-model", api_key=KEY, transport=httpx.MockTransport(fake), **kwargs
    )


def test_caller_first_and_end_token_stops_the_call() -> None:
    fake = FakeChat(
        agent=["Assalam o alaikum, Ayesha ji!", "Your appointment is on 12 March."],
        caller=["Hello?", "Who is it?", "Okay, bye. [END]"],
    )
    conv = run(backend_for(fake), setup())
    assert conv == [
        Utterance("caller", "Hello?"),
        Utterance("agent", "Assalam o alaikum, Ayesha ji!"),
        Utterance("caller", "Who is it?"),
        Utterance("agent", "Your appointment is on 12 March."),
        Utterance("caller", "Okay, bye."),
    ]
    assert len(fake.requests) == 5


def test_each_side_sees_its_own_turns_as_assistant() -> None:
    fake = FakeChat(agent=["A1", "A2"], caller=["C1", "C2", "bye [END]"])
    run(backend_for(fake), setup())
    last_agent = [r for r in fake.requests if fake.side_of(r) == "agent"][-1]
    assert [m["role"] for m in last_agent["messages"]] == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in last_agent["messages"][1:]] == ["C1", "A1", "C2"]
    last_caller = fake.requests[-1]
    assert [m["role"] for m in last_caller["messages"]] == [
        "system",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    first_caller = fake.requests[0]
    assert [m["role"] for m in first_caller["messages"]] == ["system", "user"]


def test_system_prompts_carry_instructions_persona_context_and_record() -> None:
    fake = FakeChat(agent=["A1 [END]"], caller=["Hello?"])
    run(backend_for(fake), setup())
    caller_system = fake.requests[0]["messages"][0]["content"]
    agent_system = fake.requests[1]["messages"][0]["content"]
    assert "Remind Ayesha Khan about 12 March. Missing: {{nope}}." in agent_system
    assert "speaks first" in agent_system
    assert "You are busy and hang up quickly." in caller_system
    assert "Expecting a reminder" in caller_system
    assert json.dumps(RECORD) in caller_system
    assert "[END]" in caller_system


def test_cold_call_prompt_without_context() -> None:
    fake = FakeChat(agent=[], caller=["Who is this? [END]"])
    conv = run(backend_for(fake), setup(context=None))
    assert conv == [Utterance("caller", "Who is this?")]
    assert "not expecting this call" in fake.requests[0]["messages"][0]["content"]


def test_agent_greets_first_with_greeting_instructions() -> None:
    fake = FakeChat(agent=["Hi Ayesha!"], caller=["[END]"])
    conv = run(backend_for(fake), setup(greeting=True))
    assert conv == [Utterance("agent", "Hi Ayesha!")]  # an empty ending turn yields nothing
    first = fake.requests[0]
    assert "Greet Ayesha Khan warmly." in first["messages"][0]["content"]
    assert first["messages"][1] == {
        "role": "user",
        "content": "(The call has connected. Speak first.)",
    }


def test_request_sends_model_seed_temperature_and_key() -> None:
    fake = FakeChat(agent=[], caller=["bye [END]"])
    run(backend_for(fake), setup())
    assert fake.requests[0]["model"] == "tiny-model"
    assert fake.requests[0]["temperature"] == 0.7
    assert fake.requests[0]["seed"] == 1234
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"


def test_no_key_sends_no_authorization() -> None:
    fake = FakeChat(agent=[], caller=["bye [END]"])
    backend = LlmBackend(BASE, "m", transport=httpx.MockTransport(fake))
    run(backend, setup())
    assert "authorization" not in fake.headers[0]


@pytest.mark.parametrize("max_turns", [1, 2, 3])
def test_max_turns_caps_the_conversation(max_turns: int) -> None:
    fake = FakeChat(agent=["a"] * 5, caller=["c"] * 5)
    assert len(run(backend_for(fake, max_turns=max_turns), setup())) == max_turns


def test_repr_and_logs_never_show_the_key(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeChat(agent=["A"], caller=["C", "bye [END]"])
    backend = backend_for(fake)
    assert KEY not in repr(backend)
    assert "***" in repr(backend)
    with caplog.at_level(logging.DEBUG):
        run(backend, setup())
    assert caplog.records
    assert KEY not in caplog.text


@pytest.mark.parametrize(
    ("fake", "match"),
    [
        (FakeChat([], [], status=500), "HTTP 500"),
        (FakeChat([], [], raw={"choices": []}), "choices"),
        (FakeChat([], [], raw={"choices": [{"message": {"content": None}}]}), "not a string"),
        (FakeChat([], [""]), "empty caller turn"),
    ],
)
def test_failures_raise_without_the_key(fake: FakeChat, match: str) -> None:
    with pytest.raises(LlmBackendError, match=match) as excinfo:
        run(backend_for(fake), setup())
    assert KEY not in str(excinfo.value)


def test_connection_errors_raise_backend_errors() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(LlmBackendError, match="request failed"):
        run(backend_for(refuse), setup())
