"""The retry policy: what is retried, how long it waits, and how many attempts it makes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

import httpx
import pytest

from evalkit.api import (
    ApiConnectionError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    ServiceUnavailableError,
    StreamDropped,
    Transcript,
)

from .twins import BASE, KEY, Answer, Server, run_on

AID = "3f1c2b9e-8a44-4c1e-9d57-0b6a1f2e7c10"
LID = "9b2e6d1a-1f0c-4e7b-8a3d-5c4b3a291807"
PERSONA = {"label": "Busy", "behavior": "In a hurry.", "path": "negative"}
CONFIG = {"agent": {"instructions": "x"}}
ASSISTANT = {"realtimeAssistantId": AID, "name": "n", "config": CONFIG}
DONE = (
    b'event: turn\ndata: {"index":1,"role":"agent","text":"Salam"}\n\n'
    b'event: done\ndata: {"personaId":"p","personaLabel":"Busy","archetype":"happy",'
    b'"path":"negative","turns":[{"speaker":"agent","text":"Salam"}]}\n\n'
)
SSE = {"content-type": "text/event-stream"}
RATE_LIMITED = "Rate limit exceeded, please try again later"


def reply(status: int = 200, **kwargs: Any) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(status, **kwargs)


def fail(status: int, **headers: str) -> Callable[[httpx.Request], httpx.Response]:
    body = {"message": f"status {status}", "statusCode": status}
    return reply(status, json=body, headers=headers)


@dataclass
class Sleeps:
    """Recording sleep functions for both twins."""

    waits: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def async_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def policy(self, **kwargs: Any) -> RetryPolicy:
        return RetryPolicy(sleep=self.sleep, async_sleep=self.async_sleep, **kwargs)


@dataclass
class Twin:
    kind: str

    def run(self, server: Server, fn: Callable[[Any], Any], retry: RetryPolicy) -> Any:
        transport = httpx.MockTransport(server)
        return run_on(self.kind, fn, BASE, KEY, transport=transport, retry=retry)


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin(request.param)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


# operation -> (call, a success answer)
OPS: dict[str, tuple[Callable[[Any], Any], Answer]] = {
    "list_assistants": (lambda c: c.list_assistants(), reply(json=[ASSISTANT])),
    "get_assistant_metadata": (
        lambda c: c.get_assistant_metadata(AID),
        reply(json={"realtimeAssistantId": AID, "aliases": {"draft": {"version": 1}}}),
    ),
    "get_contact_list": (
        lambda c: c.get_contact_list(LID),
        reply(
            json={
                "listId": LID,
                "name": "n",
                "sourceKind": "paste",
                "summary": {"willBeCalled": 0},
                "contactCount": 0,
            }
        ),
    ),
    "delete_assistant": (lambda c: c.delete_assistant(AID), reply(204)),
    "text_to_speech": (
        lambda c: c.text_to_speech("ok", "v_8eelc901", "MP3_22050_32"),
        reply(content=b"ID3"),
    ),
    "simulate": (lambda c: c.simulate(AID, PERSONA).collect(), reply(content=DONE, headers=SSE)),
    "create_assistant": (lambda c: c.create_assistant("n", CONFIG), reply(201, json=ASSISTANT)),
    "refine": (
        lambda c: c.refine(AID, "shorter"),
        reply(json={"buildId": "b", "assistantId": AID, "status": "started"}),
    ),
    "create_session": (
        lambda c: c.create_session(AID, "A"),
        reply(json={"token": "t", "wsUrl": "wss://x", "roomName": "r"}),
    ),
    "open_public_session": (
        lambda c: c.open_public_session(AID, "A"),
        reply(json={"token": "t", "wsUrl": "wss://x", "roomName": "r"}),
    ),
    "create_phrase_replacement_config": (
        lambda c: c.create_phrase_replacement_config([{"phrase": "a", "replacement": "b"}]),
        reply(json={"configId": "c", "phraseReplacements": [{"phrase": "a", "replacement": "b"}]}),
    ),
}
IDEMPOTENT = [
    "list_assistants",
    "get_assistant_metadata",
    "get_contact_list",
    "delete_assistant",
    "text_to_speech",
    "simulate",
]
NOT_IDEMPOTENT = [
    "create_assistant",
    "refine",
    "create_session",
    "create_phrase_replacement_config",
]


# --------------------------------------------------------------------------- 429 and Retry-After


@pytest.mark.parametrize("op", ["list_assistants", "create_assistant", "refine", "simulate"])
def test_429_is_retried_honouring_retry_after_seconds(twin: Twin, sleeps: Sleeps, op: str) -> None:
    call, ok = OPS[op]
    server = Server(fail(429, **{"retry-after": "3"}), ok)
    result = twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2
    assert sleeps.waits == [3.0]
    if op == "simulate":
        assert isinstance(result, Transcript)


def test_429_retry_after_http_date(twin: Twin, sleeps: Sleeps) -> None:
    call, ok = OPS["list_assistants"]
    when = formatdate(time.time() + 30, usegmt=True)
    server = Server(fail(429, **{"retry-after": when}), ok)
    twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2
    [wait] = sleeps.waits
    assert 27.0 <= wait <= 30.0


def test_429_retry_after_date_in_the_past_waits_nothing(twin: Twin, sleeps: Sleeps) -> None:
    call, ok = OPS["list_assistants"]
    server = Server(fail(429, **{"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}), ok)
    twin.run(server, call, sleeps.policy())
    assert sleeps.waits == [0.0]


@pytest.mark.parametrize(
    "retry_after", ["3600", "Tue, 10 Nov 2076 01:22:55 GMT"], ids=["seconds", "http-date"]
)
def test_429_retry_after_is_capped(twin: Twin, sleeps: Sleeps, retry_after: str) -> None:
    call, ok = OPS["list_assistants"]
    server = Server(fail(429, **{"retry-after": retry_after}), ok)
    twin.run(server, call, sleeps.policy())
    assert sleeps.waits == [60.0]
    sleeps.waits.clear()
    server = Server(fail(429, **{"retry-after": retry_after}), ok)
    twin.run(server, call, sleeps.policy(max_retry_after=5.0))
    assert sleeps.waits == [5.0]


def test_429_without_retry_after_backs_off(twin: Twin, sleeps: Sleeps) -> None:
    call, ok = OPS["list_assistants"]
    server = Server(fail(429), fail(429), ok)
    twin.run(server, call, sleeps.policy(initial_wait=1.0, jitter=0.0))
    assert sleeps.waits == [1.0, 2.0]


def test_unparseable_retry_after_backs_off(twin: Twin, sleeps: Sleeps) -> None:
    call, ok = OPS["list_assistants"]
    server = Server(fail(429, **{"retry-after": "soon"}), ok)
    twin.run(server, call, sleeps.policy(initial_wait=1.5, jitter=0.0))
    assert sleeps.waits == [1.5]


@pytest.mark.parametrize("op", ["text_to_speech", "create_phrase_replacement_config"])
def test_synthesis_rate_limit_message_is_retried(twin: Twin, sleeps: Sleeps, op: str) -> None:
    call, ok = OPS[op]
    server = Server(reply(400, json={"message": RATE_LIMITED}), ok)
    twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2


def test_429_gives_up_after_max_attempts(twin: Twin, sleeps: Sleeps) -> None:
    call, _ = OPS["create_assistant"]
    server = Server(fail(429, **{"retry-after": "1"}))
    with pytest.raises(RateLimitError):
        twin.run(server, call, sleeps.policy(max_attempts=3))
    assert len(server.requests) == 3
    assert sleeps.waits == [1.0, 1.0]


# --------------------------------------------------------------------------- 502 / 503 / 504


@pytest.mark.parametrize("status", [502, 503, 504])
@pytest.mark.parametrize("op", IDEMPOTENT)
def test_gateway_errors_retried_for_idempotent_calls(
    twin: Twin, sleeps: Sleeps, op: str, status: int
) -> None:
    call, ok = OPS[op]
    server = Server(fail(status), ok)
    twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2
    assert len(sleeps.waits) == 1


@pytest.mark.parametrize("status", [502, 503, 504])
@pytest.mark.parametrize("op", NOT_IDEMPOTENT)
def test_gateway_errors_not_retried_for_posts(
    twin: Twin, sleeps: Sleeps, op: str, status: int
) -> None:
    call, ok = OPS[op]
    server = Server(fail(status), ok)
    expected = ServiceUnavailableError if status == 503 else ServerError
    with pytest.raises(expected):
        twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 1
    assert sleeps.waits == []


@pytest.mark.parametrize("op", ["list_assistants", "text_to_speech"])
def test_500_is_not_retried(twin: Twin, sleeps: Sleeps, op: str) -> None:
    call, ok = OPS[op]
    server = Server(fail(500), ok)
    with pytest.raises(ServerError):
        twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 1


def test_simulate_not_retried_once_streaming(twin: Twin, sleeps: Sleeps) -> None:
    call, ok = OPS["simulate"]
    dropped = reply(content=DONE.split(b"event: done")[0], headers=SSE)
    server = Server(dropped, ok)
    with pytest.raises(StreamDropped):
        twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 1


# --------------------------------------------------------------------------- never retried


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, PermissionDeniedError),
        (404, NotFoundError),
    ],
)
@pytest.mark.parametrize("op", [*IDEMPOTENT, *NOT_IDEMPOTENT, "open_public_session"])
def test_client_errors_never_retried(
    twin: Twin, sleeps: Sleeps, op: str, status: int, cls: type[Exception]
) -> None:
    call, ok = OPS[op]
    server = Server(fail(status), ok)
    with pytest.raises(cls):
        twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 1
    assert sleeps.waits == []


# --------------------------------------------------------------------------- transport errors


@pytest.mark.parametrize("op", ["list_assistants", "create_assistant", "refine", "simulate"])
@pytest.mark.parametrize(
    "error", [httpx.ConnectError("connection refused"), httpx.ConnectTimeout("connect timed out")]
)
def test_connect_errors_retried_for_every_call(
    twin: Twin, sleeps: Sleeps, op: str, error: Exception
) -> None:
    call, ok = OPS[op]
    server = Server(error, ok)
    twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2
    assert len(sleeps.waits) == 1


def test_connect_errors_give_up_after_max_attempts(twin: Twin, sleeps: Sleeps) -> None:
    call, _ = OPS["list_assistants"]
    server = Server(httpx.ConnectError("connection refused"))
    with pytest.raises(ApiConnectionError) as info:
        twin.run(server, call, sleeps.policy(max_attempts=3))
    assert len(server.requests) == 3
    assert len(sleeps.waits) == 2
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    assert "GET /realtime-assistants" in str(info.value)


@pytest.mark.parametrize("error", [httpx.ReadError("reset"), httpx.ReadTimeout("read timed out")])
def test_read_errors_retried_only_for_idempotent_calls(
    twin: Twin, sleeps: Sleeps, error: Exception
) -> None:
    call, ok = OPS["get_contact_list"]
    server = Server(error, ok)
    twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 2

    call, ok = OPS["refine"]
    server = Server(error, ok)
    expected = ApiTimeoutError if isinstance(error, httpx.TimeoutException) else ApiConnectionError
    with pytest.raises(expected):
        twin.run(server, call, sleeps.policy())
    assert len(server.requests) == 1


# --------------------------------------------------------------------------- attempts and waits


@pytest.mark.parametrize("max_attempts", [1, 2, 5])
def test_attempts_capped_by_max_attempts(twin: Twin, sleeps: Sleeps, max_attempts: int) -> None:
    call, _ = OPS["get_assistant_metadata"]
    server = Server(fail(503))
    with pytest.raises(ServiceUnavailableError):
        twin.run(server, call, sleeps.policy(max_attempts=max_attempts))
    assert len(server.requests) == max_attempts
    assert len(sleeps.waits) == max_attempts - 1


def test_backoff_grows_and_is_capped(twin: Twin, sleeps: Sleeps) -> None:
    call, _ = OPS["list_assistants"]
    server = Server(fail(502))
    policy = sleeps.policy(max_attempts=6, initial_wait=0.5, max_wait=3.0, jitter=0.25, seed=1)
    with pytest.raises(ServerError):
        twin.run(server, call, policy)
    bases = [0.5, 1.0, 2.0, 3.0, 3.0]
    assert len(sleeps.waits) == len(bases)
    for wait, base in zip(sleeps.waits, bases, strict=True):
        assert base <= wait <= base + 0.25


def _waits(twin: Twin, seed: int | None) -> list[float]:
    sleeps = Sleeps()
    call, _ = OPS["list_assistants"]
    with pytest.raises(ServiceUnavailableError):
        twin.run(Server(fail(503)), call, sleeps.policy(max_attempts=5, seed=seed))
    return sleeps.waits


def test_seeded_jitter_is_reproducible(twin: Twin) -> None:
    first = _waits(twin, seed=7)
    assert first == _waits(twin, seed=7)
    assert first != _waits(twin, seed=8)
    # sync and async twins draw the same jitter for the same seed
    other = Twin("async" if twin.kind == "sync" else "sync")
    assert first == _waits(other, seed=7)


def test_wait_for_is_a_pure_function_of_attempt_and_rng() -> None:
    import random

    policy = RetryPolicy(initial_wait=1.0, max_wait=10.0, jitter=0.0)
    error = ServerError(502, ["bad gateway"])
    assert [policy.wait_for(n, error, random.Random(0)) for n in (1, 2, 3, 4, 5)] == [
        1.0,
        2.0,
        4.0,
        8.0,
        10.0,
    ]
    limited = RateLimitError(429, [])
    limited.retry_after = 7.0
    assert policy.wait_for(1, limited, random.Random(0)) == 7.0


# --------------------------------------------------------------------------- presets


def test_no_wait_retries_without_sleeping(twin: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> None:
        raise AssertionError("no_wait() slept")

    monkeypatch.setattr(time, "sleep", boom)
    monkeypatch.setattr(asyncio, "sleep", boom)
    call, ok = OPS["list_assistants"]
    server = Server(
        fail(503), httpx.ConnectError("refused"), fail(429, **{"retry-after": "30"}), ok
    )
    twin.run(server, call, RetryPolicy.no_wait())
    assert len(server.requests) == 4


def test_no_wait_defaults() -> None:
    assert RetryPolicy.no_wait().max_attempts == RetryPolicy().max_attempts
    assert RetryPolicy.no_wait(max_attempts=2).max_attempts == 2


@pytest.mark.parametrize(
    "answer", [fail(503), fail(429, **{"retry-after": "1"}), httpx.ConnectError("refused")]
)
def test_never_makes_exactly_one_attempt(twin: Twin, answer: Answer) -> None:
    call, ok = OPS["list_assistants"]
    server = Server(answer, ok)
    with pytest.raises((ServiceUnavailableError, RateLimitError, ApiConnectionError)):
        twin.run(server, call, RetryPolicy.never())
    assert len(server.requests) == 1


def test_max_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_default_policy_retries_a_few_times() -> None:
    policy = RetryPolicy()
    assert 2 <= policy.max_attempts <= 10
    assert policy.max_retry_after >= 30


def test_the_one_loop_waits_retries_at_once_or_stops_as_the_caller_decides() -> None:
    """``RetryPolicy.run`` is the loop every retrying caller uses (the clients, the runner's
    re-run of a dropped stream, the judge's and the proposer's chat endpoint)."""
    sleeps = Sleeps()
    policy = sleeps.policy(max_attempts=4, initial_wait=1.0, jitter=0.0)
    errors = [KeyError("answered badly"), OSError("dropped"), ValueError("final")]
    seen: list[tuple[int, str, float]] = []

    def attempt(n: int) -> str:
        raise errors[n - 1]

    def decide(exc: Exception) -> Any:
        return {KeyError: "now", OSError: "wait", ValueError: "stop"}[type(exc)]

    with pytest.raises(ValueError, match="final"):
        policy.run(
            attempt, decide=decide, on_retry=lambda n, e, w: seen.append((n, type(e).__name__, w))
        )
    assert seen == [(1, "KeyError", 0.0), (2, "OSError", 2.0)]
    assert sleeps.waits == [2.0]  # no wait after the answer asked again at once
    calls: list[int] = []

    def flaky(n: int) -> int:
        calls.append(n)
        if n < 3:
            raise OSError("again")
        return n

    assert policy.run(flaky, decide=lambda exc: "wait") == 3
    with pytest.raises(OSError, match="again"):
        policy.run(flaky, decide=lambda exc: "wait", attempts=1)  # the caller's own limit
    assert calls == [1, 2, 3, 1]


async def test_the_async_loop_lets_cancellation_through_at_once() -> None:
    sleeps = Sleeps()
    policy = sleeps.policy()
    calls = 0

    async def attempt(n: int) -> None:
        nonlocal calls
        calls += 1
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await policy.arun(attempt, decide=lambda exc: "wait")
    assert calls == 1
    assert sleeps.waits == []
