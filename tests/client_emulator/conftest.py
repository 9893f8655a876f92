"""Fixtures of the live tests: one emulator per module on 127.0.0.1 and the client under test.

Every test is written once, as an ``async def`` taking the ``make_api`` factory (or ``api``),
and runs twice: through :class:`evalkit.Client` and through :class:`evalkit.AsyncClient`.
:class:`Api` puts both behind awaitable methods (a sync call simply runs to completion; the
emulator serves from its own thread, so blocking the test's loop is harmless).

Each client sends through a recording transport (a real ``httpx`` HTTP transport that keeps
every request it sends), so a test can tell that nothing was sent, or that no
``Authorization`` header was.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import EllipsisType
from typing import Any, Final, Literal

import httpx
import pytest

from evalkit.api import (
    AsyncClient,
    AsyncSimulationStream,
    Client,
    RetryPolicy,
    SimulationEvent,
    Transcript,
)
from evalkit.emulator import EmulatorServer, serve

Kind = Literal["sync", "async"]
KINDS: Final[tuple[Kind, ...]] = ("sync", "async")
SEED: Final = 20240611
TIME_SCALE: Final = 0.01
LLM: Final = {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}}
NEUTRAL: Final = {"label": "Neutral caller", "behavior": "answers the phone normally"}


def make_config(
    instructions: str = "You call the customer from the Karachi Clinic about an appointment.",
    greeting: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid assistant config; ``greeting`` turns initialGreeting on with these instructions."""
    agent: dict[str, Any] = {"instructions": instructions}
    if greeting is not None:
        agent.update(initialGreeting=True, greetingInstructions=greeting)
    return {"agent": agent, "llm": copy.deepcopy(LLM), **extra}


# --------------------------------------------------------------------------- recording transports


class _RecordingTransport(httpx.HTTPTransport):
    def __init__(self, log: list[httpx.Request]) -> None:
        super().__init__()
        self._log = log

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._log.append(request)
        return super().handle_request(request)


class _AsyncRecordingTransport(httpx.AsyncHTTPTransport):
    def __init__(self, log: list[httpx.Request]) -> None:
        super().__init__()
        self._log = log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._log.append(request)
        return await super().handle_async_request(request)


# --------------------------------------------------------------------------- the client under test


class Api:
    """A :class:`Client` or an :class:`AsyncClient` behind awaitable methods.

    ``await api.create_assistant(...)`` calls the client's method of that name (awaiting it for
    the async twin). ``sent`` lists every request that reached the transport.
    """

    def __init__(self, kind: Kind, base_url: str, api_key: str | None, **options: Any) -> None:
        self.kind = kind
        self.sent: list[httpx.Request] = []
        self.client: Client | AsyncClient
        if kind == "sync":
            transport = _RecordingTransport(self.sent)
            self.client = Client(base_url, api_key, transport=transport, **options)
        else:
            atransport = _AsyncRecordingTransport(self.sent)
            self.client = AsyncClient(base_url, api_key, transport=atransport, **options)

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result

        return call

    def __repr__(self) -> str:
        return f"Api({self.kind}, {self.client!r})"

    async def collect(self, assistant_id: str, persona: Any, **kwargs: Any) -> Transcript:
        """Run a simulate stream to its terminal event."""
        stream = self.client.simulate(assistant_id, persona, **kwargs)
        if isinstance(stream, AsyncSimulationStream):
            return await stream.collect()
        return stream.collect()

    async def take(
        self, assistant_id: str, persona: Any, n: int, **kwargs: Any
    ) -> list[SimulationEvent]:
        """Read ``n`` events of a simulate stream, then close it early."""
        events: list[SimulationEvent] = []
        stream = self.client.simulate(assistant_id, persona, **kwargs)
        if isinstance(stream, AsyncSimulationStream):
            async with stream:
                async for event in stream:
                    events.append(event)
                    if len(events) >= n:
                        break
        else:
            with stream:
                for event in stream:
                    events.append(event)
                    if len(events) >= n:
                        break
        return events

    async def aclose(self) -> None:
        if isinstance(self.client, AsyncClient):
            await self.client.aclose()
        else:
            self.client.close()


MakeApi = Callable[..., Api]


# --------------------------------------------------------------------------- fixtures


@contextlib.contextmanager
def serving(**settings: Any) -> Iterator[EmulatorServer]:
    """An emulator on 127.0.0.1 for a module; afterwards, no request may have ended in a 500."""
    with serve(port=0, **settings) as server:
        yield server
        unhandled = server.stats()["unhandledErrors"]
        assert unhandled == 0, f"the emulator answered {unhandled} request(s) with a 500"


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    """One emulator per test module, fast time (a 15 s ping every 0.15 s, builds in 1.2 s)."""
    with serving(time_scale=TIME_SCALE, seed=SEED) as server:
        yield server


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> Kind:
    """Which client runs the test: ``sync`` (Client) or ``async`` (AsyncClient)."""
    value: Kind = request.param
    return value


@pytest.fixture
async def make_api(emu: EmulatorServer, kind: Kind) -> AsyncIterator[MakeApi]:
    """Build clients of this test's kind: ``make_api(api_key=..., server=..., **client_options)``.

    ``api_key`` defaults to the emulator's key (None: no key); retries default to two attempts
    without sleeping; every client is closed after the test.
    """
    made: list[Api] = []

    def make(
        api_key: str | EllipsisType | None = ...,
        *,
        server: EmulatorServer | None = None,
        **options: Any,
    ) -> Api:
        target = server or emu
        key = target.api_key if isinstance(api_key, EllipsisType) else api_key
        options.setdefault("retry", RetryPolicy.no_wait(max_attempts=2))
        api = Api(kind, target.base_url, key, **options)
        made.append(api)
        return api

    yield make
    for api in made:
        await api.aclose()


@pytest.fixture
def api(make_api: MakeApi) -> Api:
    """The client under test with the emulator's default project key."""
    return make_api()


# --------------------------------------------------------------------------- helpers


def new_project(server: EmulatorServer) -> dict[str, str]:
    """A fresh project (own faults, credits, lists): {organizationId, projectId, apiKey}."""
    return server.new_project()


def auth_headers(requests: list[httpx.Request]) -> list[str | None]:
    """The Authorization header of each request (None where absent)."""
    return [r.headers.get("authorization") for r in requests]


def body_of(request: httpx.Request) -> Mapping[str, Any]:
    """The JSON body a request carried."""
    value: Mapping[str, Any] = json.loads(request.content)
    return value
