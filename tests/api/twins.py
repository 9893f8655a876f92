"""Run one test body through ``Client`` (sync) or ``AsyncClient`` (async), so it is written once."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

import httpx

from evalkit import AsyncClient, Client

BASE = "https://svc.test/v1"
KEY = "sk_api_T3stKey0123456789abcdef"

Answer = Callable[[httpx.Request], httpx.Response] | Exception


def run_on(kind: str, fn: Callable[[Any], Any], *args: Any, **client_kwargs: Any) -> Any:
    """Build the ``kind`` (``sync``/``async``) client from ``args``/``client_kwargs``, run
    ``fn(client)`` (awaiting it for the async twin) and close the client."""
    if kind == "sync":
        with Client(*args, **client_kwargs) as client:
            return fn(client)
    return run_async_client(AsyncClient(*args, **client_kwargs), fn)


def run_async_client(client: AsyncClient, fn: Callable[[Any], Any]) -> Any:
    """``fn(client)`` in a fresh event loop, awaited when it returns an awaitable."""

    async def main() -> Any:
        async with client:
            out = fn(client)
            return await out if inspect.isawaitable(out) else out

    return asyncio.run(main())


class Server:
    """A MockTransport handler: records every request, answers in order (the last one repeats)."""

    def __init__(self, *answers: Answer) -> None:
        self.requests: list[httpx.Request] = []
        self._answers = list(answers)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer(request)
