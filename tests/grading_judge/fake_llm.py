"""A controllable OpenAI-compatible chat-completions server for the judge's tests.

It reads evalkit's judge prompt the way any judge endpoint must (the fenced JSON block at the
end of the last user message) and answers according to its current behaviour, a name from
:data:`BEHAVIOURS`. ``script`` gives the behaviours of the next calls, in order; once it is
used up, ``behaviour`` applies. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

FENCE = re.compile(r"```json\n(.*)\n```\s*$", re.DOTALL)
USAGE = {"prompt_tokens": 101, "completion_tokens": 7, "total_tokens": 108}


def read_prompt(body: dict[str, Any]) -> dict[str, Any]:
    """The transcript and rules from the fenced JSON block of the last user message."""
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    match = FENCE.search(user)
    assert match, "the user message does not end with a fenced JSON block"
    payload: dict[str, Any] = json.loads(match.group(1))
    return payload


def verdicts_for(payload: dict[str, Any], verdict: str = "pass") -> dict[str, Any]:
    first = payload["transcript"][0]["turn"] if payload["transcript"] else None
    return {
        "verdicts": [
            {"rule_id": r["rule_id"], "verdict": verdict, "reason": "seen", "evidence_turn": first}
            for r in payload["rules"]
        ]
    }


def completion(content: str, usage: dict[str, int] | None = USAGE) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if usage is not None:
        answer["usage"] = usage
    return answer


Handler = Callable[["FakeLLM", dict[str, Any]], Awaitable[Response]]


async def _valid(fake: FakeLLM, body: dict[str, Any]) -> Response:
    return JSONResponse(completion(json.dumps(verdicts_for(read_prompt(body), fake.verdict))))


async def _fenced(fake: FakeLLM, body: dict[str, Any]) -> Response:
    answer = json.dumps(verdicts_for(read_prompt(body), fake.verdict), indent=2)
    return JSONResponse(completion(f"Here is my judgement.\n```json\n{answer}\n```\nDone."))


async def _garbage(fake: FakeLLM, body: dict[str, Any]) -> Response:
    return JSONResponse(completion("I think the agent did fine overall {not json"))


async def _wrong_ids(fake: FakeLLM, body: dict[str, Any]) -> Response:
    answer = verdicts_for(read_prompt(body), fake.verdict)
    answer["verdicts"][0]["rule_id"] = "made-up-rule"
    return JSONResponse(completion(json.dumps(answer)))


async def _error_500(fake: FakeLLM, body: dict[str, Any]) -> Response:
    return JSONResponse({"error": {"message": "internal error", "type": "server_error"}}, 500)


async def _not_json(fake: FakeLLM, body: dict[str, Any]) -> Response:
    return PlainTextResponse("<html>bad gateway</html>", 200)


async def _rate_limited(fake: FakeLLM, body: dict[str, Any]) -> Response:
    return JSONResponse({"error": {"message": "slow down"}}, 429, headers={"Retry-After": "7"})


async def _unauthorized(fake: FakeLLM, body: dict[str, Any]) -> Response:
    echoed = fake.headers[-1].get("authorization", "")
    return JSONResponse({"error": {"message": f"invalid key {echoed}"}}, 401)


async def _no_response_format(fake: FakeLLM, body: dict[str, Any]) -> Response:
    """Refuses response_format with 400 (as some servers do) and answers plain JSON otherwise."""
    if "response_format" in body:
        return JSONResponse({"error": {"message": "response_format is not supported"}}, 400)
    return await _fenced(fake, body)


BEHAVIOURS: dict[str, Handler] = {
    "valid": _valid,
    "fenced": _fenced,
    "garbage": _garbage,
    "wrong_ids": _wrong_ids,
    "error_500": _error_500,
    "not_json": _not_json,
    "rate_limited": _rate_limited,
    "unauthorized": _unauthorized,
    "no_response_format": _no_response_format,
}


@dataclass
class FakeLLM:
    """The server's state, set by a test before calls and read after them."""

    behaviour: str = "valid"
    script: list[str] = field(default_factory=list)
    verdict: str = "pass"
    delay: float = 0.0
    #: text of a transcript -> how many of its next calls stall ``stall_s`` before answering
    stalls: dict[str, int] = field(default_factory=dict)
    stall_s: float = 5.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    @property
    def calls(self) -> int:
        return len(self.bodies)

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        behaviour = self.script.pop(0) if self.script else self.behaviour
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            said = json.dumps(body["messages"], ensure_ascii=False)
            for text, left in self.stalls.items():
                if left and text in said:
                    self.stalls[text] = left - 1
                    await asyncio.sleep(self.stall_s)
            return await BEHAVIOURS[behaviour](self, body)
        finally:
            self.in_flight -= 1

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.handle, methods=["POST"])])
