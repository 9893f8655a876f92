"""The simulate stream over a real loopback socket (uvicorn): keepalives, drops, disconnects."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import evalkit
from evalkit import AsyncClient, Client, RetryPolicy
from tests.loopback import serve_app

KEY = "sk_api_live_test_key_0123456789"


def _frame(event: str, data: object) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Server:
    def __init__(self) -> None:
        self.disconnected = threading.Event()
        self.requests = 0

    def app(self) -> Starlette:
        async def simulate(request: Request) -> Response:
            self.requests += 1
            body = await request.json()
            mode = body["persona"]["label"]
            if request.headers.get("authorization") != f"Bearer {KEY}":
                return JSONResponse(
                    {
                        "message": "invalid authorization",
                        "error": "Unauthorized",
                        "statusCode": 401,
                    },
                    401,
                )
            if mode == "bad":
                return JSONResponse(
                    {
                        "message": ["context must be shorter"],
                        "error": "Bad Request",
                        "statusCode": 400,
                    },
                    400,
                )

            async def gen() -> AsyncIterator[bytes]:
                try:
                    if mode == "slow":
                        for _ in range(12):  # 1.2 s of pings only, against a 0.5 s read timeout
                            yield b": ping\n\n"
                            await asyncio.sleep(0.1)
                    yield _frame("turn", {"index": 1, "role": "agent", "text": "Assalam o alaikum"})
                    if mode == "drop":
                        return
                    if mode == "forever":
                        i = 1
                        while True:
                            i += 1
                            await asyncio.sleep(0.02)
                            yield _frame("turn", {"index": i, "role": "caller", "text": "jee"})
                    yield _frame("turn", {"index": 2, "role": "caller", "text": "Walaikum salam"})
                    turns = [
                        {"speaker": "agent", "text": "Assalam o alaikum"},
                        {"speaker": "caller", "text": "Walaikum salam"},
                    ]
                    yield _frame(
                        "done",
                        {
                            "personaId": "p",
                            "personaLabel": mode,
                            "archetype": "happy",
                            "path": "negative",
                            "turns": turns,
                        },
                    )
                finally:
                    self.disconnected.set()

            return StreamingResponse(gen(), media_type="text/event-stream")

        return Starlette(
            routes=[
                Route("/v1/realtime-assistants/builds/{aid}/simulate", simulate, methods=["POST"])
            ]
        )


@pytest.fixture
def server() -> Iterator[tuple[_Server, str]]:
    srv = _Server()
    with serve_app(srv.app()) as url:
        yield srv, url + "/v1"


def _short_timeout() -> httpx.Timeout:
    return httpx.Timeout(5.0, read=0.5, pool=None)


def test_pings_keep_stream_alive_past_read_timeout(server: tuple[_Server, str]) -> None:
    _, base = server
    with Client(base, KEY, timeout=_short_timeout()) as client:
        transcript = client.simulate("a1", {"label": "slow", "behavior": "b"}).collect()
    assert transcript.ok
    assert [t.text for t in transcript.turns] == ["Assalam o alaikum", "Walaikum salam"]
    assert transcript.first_turn_s is not None
    assert transcript.first_turn_s >= 1.0


async def test_async_pings_keep_stream_alive(server: tuple[_Server, str]) -> None:
    _, base = server
    async with AsyncClient(base, KEY, timeout=_short_timeout()) as client:
        transcript = await client.simulate("a1", {"label": "slow", "behavior": "b"}).collect()
    assert isinstance(transcript.outcome, evalkit.Done)
    assert transcript.outcome.persona_label == "slow"


def test_stream_ending_without_terminal_raises_dropped_with_turns(
    server: tuple[_Server, str],
) -> None:
    _, base = server
    with Client(base, KEY) as client, pytest.raises(evalkit.StreamDropped) as info:
        client.simulate("a1", {"label": "drop", "behavior": "b"}).collect()
    assert [t.text for t in info.value.turns] == ["Assalam o alaikum"]


def test_bad_request_before_streaming(server: tuple[_Server, str]) -> None:
    srv, base = server
    with (
        Client(base, KEY, retry=RetryPolicy.no_wait()) as client,
        pytest.raises(evalkit.BadRequestError) as info,
    ):
        client.simulate("a1", {"label": "bad", "behavior": "b"}).collect()
    assert info.value.messages == ["context must be shorter"]
    assert srv.requests == 1  # 400 is never retried


def test_closing_the_iterator_disconnects(server: tuple[_Server, str]) -> None:
    srv, base = server
    with Client(base, KEY) as client:
        stream = client.simulate("a1", {"label": "forever", "behavior": "b"})
        events = [next(stream) for _ in range(3)]
        assert all(isinstance(e, evalkit.Turn) for e in events)
        stream.close()
        assert srv.disconnected.wait(5), "server did not see the client go away"


async def test_cancelling_the_async_stream_disconnects(server: tuple[_Server, str]) -> None:
    srv, base = server
    async with AsyncClient(base, KEY) as client:
        streaming = asyncio.Event()

        async def consume() -> None:
            async for _ in client.simulate("a1", {"label": "forever", "behavior": "b"}):
                streaming.set()

        task = asyncio.create_task(consume())
        async with asyncio.timeout(10):
            await streaming.wait()  # cancel mid-stream, after the first event
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(srv.disconnected.wait, 5)


def test_total_deadline_ends_a_stream_kept_alive_by_pings(server: tuple[_Server, str]) -> None:
    _, base = server
    with (
        Client(base, KEY, stream_deadline=0.4) as client,
        pytest.raises(evalkit.api.StreamDeadlineExceeded),
    ):
        client.simulate("a1", {"label": "slow", "behavior": "b"}).collect()
