"""One chat-completions call's wire side: a bounded read of the answer, the typed error of an
error answer, what is worth another call, the content read."""

from __future__ import annotations

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
    is_retryable,
    parse_retry_after,
)
from ._answers import MalformedAnswer

__all__ = [
    "RESPONSE_FORMAT_REFUSED",
    "AnswerTooLarge",
    "CallDeadlineExceeded",
    "content_of",
    "http_error",
    "is_outage",
    "post_bounded",
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
    """A call did not end within its total deadline (``what``: whose call, ``setting``: the
    option that sets it, e.g. ``JudgeOptions.timeout``)."""

    def __init__(self, seconds: float, what: str = "chat", setting: str = "timeout") -> None:
        super().__init__(
            f"no complete answer within the {seconds:g} s deadline of a {what} call (connect, "
            f"send and read the whole answer; {setting})"
        )


class AnswerTooLarge(MalformedAnswer):
    """A successful answer longer than its limit (``setting``, e.g.
    ``JudgeOptions.max_response_bytes``); abandoned unread."""

    def __init__(
        self, limit: int, declared: int | None = None, setting: str = "max_response_bytes"
    ) -> None:
        size = f"{declared:,} bytes, " if declared is not None else ""
        what = "unread" if declared is not None else "after that much"
        super().__init__(
            f"the answer is {size}over the {limit:,}-byte limit ({setting}); abandoned {what}"
        )


async def post_bounded(
    http: httpx.AsyncClient, request: httpx.Request, limit: int, setting: str
) -> httpx.Response:
    """Send ``request`` and read at most ``limit`` bytes of the (decoded) answer as a stream.

    A successful answer that is longer raises :class:`AnswerTooLarge` (naming ``setting``, the
    option that sets the limit) as soon as its ``Content-Length`` or its bytes say so (the
    connection is closed, never drained); an error answer is cut at ``limit``, enough for its
    message. Returns a response holding the bytes read.
    """
    response = await http.send(request, stream=True)
    chunks: list[bytes] = []
    try:
        ok = response.status_code < 400
        declared = response.headers.get("content-length", "")
        if ok and declared.isdigit() and int(declared) > limit:
            raise AnswerTooLarge(limit, int(declared), setting)
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                if ok:
                    raise AnswerTooLarge(limit, setting=setting)
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            chunks.append(chunk)
    finally:
        await response.aclose()
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in _WIRE_HEADERS]
    return httpx.Response(
        response.status_code, headers=headers, content=b"".join(chunks), request=request
    )


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
