"""One judge call's wire side: a bounded read of the answer, errors from it, what is retried,
the content read."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Final

import httpx

from ..api import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
)
from ..api._config import Secret
from ..api._retry import is_retryable, parse_retry_after
from ..api._version import USER_AGENT
from ._judge_parse import MalformedAnswer

__all__ = [
    "RESPONSE_FORMAT_REFUSED",
    "AnswerTooLarge",
    "CallDeadlineExceeded",
    "content_of",
    "http_error",
    "is_outage",
    "post_bounded",
    "post_chat",
    "retryable",
    "token_count",
]

_STATUS_ERRORS: Final[Mapping[int, type[ApiError]]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}
#: Beyond the project's retry policy (429, 502-504, transport errors): worth another call.
_EXTRA_RETRY_STATUS: Final = frozenset({408, 409, 500})
#: What an endpoint answers when it does not take ``response_format``.
RESPONSE_FORMAT_REFUSED: Final = frozenset({400, 422})
#: Headers that describe the wire form of a body, not the bytes kept (already decoded).
_WIRE_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class CallDeadlineExceeded(Exception):
    """A judge call did not end within its total deadline (``JudgeOptions.timeout``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"no complete answer within the {seconds:g} s deadline of a judge call (connect, "
            "send and read the whole answer; JudgeOptions.timeout)"
        )


class AnswerTooLarge(MalformedAnswer):
    """A successful answer longer than ``JudgeOptions.max_response_bytes``; abandoned unread."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        size = f"{declared:,} bytes, " if declared is not None else ""
        what = "unread" if declared is not None else "after that much"
        super().__init__(
            f"the answer is {size}over the {limit:,}-byte limit "
            f"(JudgeOptions.max_response_bytes); abandoned {what}"
        )


async def post_bounded(
    http: httpx.AsyncClient, request: httpx.Request, limit: int
) -> httpx.Response:
    """Send ``request`` and read at most ``limit`` bytes of the (decoded) answer as a stream.

    A successful answer that is longer raises :class:`AnswerTooLarge` as soon as its
    ``Content-Length`` or its bytes say so (the connection is closed, never drained); an
    error answer is cut at ``limit``, enough for its message. Returns a response holding the
    bytes read.
    """
    response = await http.send(request, stream=True)
    chunks: list[bytes] = []
    try:
        ok = response.status_code < 400
        declared = response.headers.get("content-length", "")
        if ok and declared.isdigit() and int(declared) > limit:
            raise AnswerTooLarge(limit, int(declared))
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                if ok:
                    raise AnswerTooLarge(limit)
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            chunks.append(chunk)
    finally:
        await response.aclose()
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in _WIRE_HEADERS]
    return httpx.Response(
        response.status_code, headers=headers, content=b"".join(chunks), request=request
    )


async def post_chat(
    http: httpx.AsyncClient,
    base_url: str,
    body: Mapping[str, Any],
    *,
    api_key: Secret | None,
    deadline: float,
    max_bytes: int,
    transport_timeout: float | None = None,
) -> httpx.Response:
    """POST ``body`` to ``{base_url}/chat/completions`` (the key only in ``Authorization``)
    within ``deadline`` seconds in all, reading at most ``max_bytes``; return the answer.

    Raises :class:`CallDeadlineExceeded` past the deadline, :class:`AnswerTooLarge` for a long
    answer and the status's :class:`~evalkit.api.ApiError` for an error answer;
    ``transport_timeout`` (None: the client's) is httpx's per-phase safety net.
    """
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key.reveal()}"
    request = http.build_request(
        "POST",
        f"{base_url}/chat/completions",
        content=json.dumps(body, ensure_ascii=False).encode(),
        headers=headers,
        timeout=httpx.USE_CLIENT_DEFAULT if transport_timeout is None else transport_timeout,
    )
    try:
        async with asyncio.timeout(deadline):
            response = await post_bounded(http, request, max_bytes)
    except TimeoutError:
        raise CallDeadlineExceeded(deadline) from None
    if response.status_code >= 400:
        raise http_error(response)
    return response


def _error_message(response: httpx.Response) -> str:
    """The error's message: OpenAI's ``{"error": {"message"}}``, a ``message``, or the text."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, Mapping):
        error = body.get("error")
        for candidate in (
            error.get("message") if isinstance(error, Mapping) else error,
            body.get("message"),
        ):
            if isinstance(candidate, str) and candidate.strip():
                return candidate[:300]
    return " ".join(response.text.split())[:300]


def http_error(response: httpx.Response) -> ApiError:
    status = response.status_code
    message = _error_message(response)
    cls = _STATUS_ERRORS.get(status, ServerError if status >= 500 else ApiError)
    exc = cls(status, [message] if message else [], method="POST", url=response.request.url.path)
    if isinstance(exc, RateLimitError):
        exc.retry_after = parse_retry_after(response.headers.get("retry-after"))
    return exc


def retryable(exc: Exception) -> bool:
    if isinstance(exc, ApiError) and exc.status_code in _EXTRA_RETRY_STATUS:
        return True
    if isinstance(exc, CallDeadlineExceeded):
        return True
    return is_retryable(exc, idempotent=True)


def is_outage(exc: Exception) -> bool:
    """A failure that says the endpoint is unreachable or broken, not this task's fault."""
    if isinstance(exc, ApiError):
        return exc.status_code >= 500
    return isinstance(exc, httpx.TransportError | CallDeadlineExceeded)


def content_of(response: httpx.Response) -> tuple[str, Any]:
    try:
        data = response.json()
    except ValueError:
        raise MalformedAnswer("the response body is not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise MalformedAnswer("the response has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise MalformedAnswer("choices[0].message.content is not text")
    return content, data.get("usage") if isinstance(data, Mapping) else None


def token_count(usage: Any, name: str) -> int:
    """A token count from ``usage`` (0 when absent or not an integer)."""
    value = usage.get(name) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
