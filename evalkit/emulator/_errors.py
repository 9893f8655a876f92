"""The service's error envelope, its exact messages, and the handlers that produce them.

Every error the emulator sends goes through :class:`ApiHttpError`, so shapes stay the
spec's: ``{"message", "error", "statusCode"}`` for most operations, ``{"message"}`` alone for
synthesis failures, and no ``error`` field on E8's 503.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import Problem, errors_only

logger = logging.getLogger("evalkit.emulator")

STATUS_NAMES: dict[int, str] = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

INVALID_AUTHORIZATION = "invalid authorization"
FORBIDDEN_RESOURCE = "Forbidden resource"
NOT_PUBLIC = "Assistant is not available publicly"
NO_BUILD_ARTIFACTS = "Assistant has no build artifacts to refine"
INSUFFICIENT_CREDITS = "Insufficient credits to start a realtime session"


def envelope(status: int, message: str | list[str], *, with_error: bool = True) -> dict[str, Any]:
    """The error body: message, the status name as `error` (unless left out), statusCode."""
    body: dict[str, Any] = {"message": message}
    if with_error:
        body["error"] = STATUS_NAMES.get(status, "Error")
    body["statusCode"] = status
    return body


class ApiHttpError(Exception):
    """An error answer: a status, a JSON body and optional headers."""

    def __init__(
        self, status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = dict(body)
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        """The JSON response carrying this error."""
        return JSONResponse(self.body, status_code=self.status, headers=self.headers)


def api_error(status: int, message: str | list[str], *, with_error: bool = True) -> ApiHttpError:
    """An error in the standard envelope."""
    return ApiHttpError(status, envelope(status, message, with_error=with_error))


def unauthorized() -> ApiHttpError:
    """401 `invalid authorization`."""
    return api_error(401, INVALID_AUTHORIZATION)


def forbidden() -> ApiHttpError:
    """403 `Forbidden resource`."""
    return api_error(403, FORBIDDEN_RESOURCE)


def assistant_not_found(assistant_id: str) -> ApiHttpError:
    """404 `Realtime assistant not found: <id>`."""
    return api_error(404, f"Realtime assistant not found: {assistant_id}")


def contact_list_not_found(list_id: str) -> ApiHttpError:
    """404 `Contact list not found: <id>`."""
    return api_error(404, f"Contact list not found: {list_id}")


def not_readable(version: int, assistant_id: str) -> ApiHttpError:
    """E8's 503: statusCode 503 and no `error` field."""
    message = f"Published version {version} of assistant {assistant_id} is not readable yet"
    return api_error(503, message, with_error=False)


def synthesis_error(
    status: int, message: str, headers: Mapping[str, str] | None = None
) -> ApiHttpError:
    """A synthesis (E11/E12) failure: a body of the form ``{"message": string}``."""
    return ApiHttpError(status, {"message": message}, headers)


def problem_messages(problems: Iterable[Problem]) -> list[str]:
    """One message per failed field, each naming the field."""
    return [str(p) for p in errors_only(list(problems))]


def raise_for_problems(problems: Iterable[Problem], *, synthesis: bool = False) -> None:
    """Raise the 400 for error-severity problems (warnings pass, as on the service)."""
    messages = problem_messages(problems)
    if not messages:
        return
    if synthesis:
        raise synthesis_error(400, "; ".join(messages))
    raise api_error(400, messages)


async def handle_api_error(request: Request, exc: Exception) -> Response:
    """Starlette handler for :class:`ApiHttpError`."""
    assert isinstance(exc, ApiHttpError)
    return exc.response()


async def handle_http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (unknown route, wrong method) in the service's envelope."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if status == 404:
        message = f"Cannot {request.method} {request.url.path}"
    else:
        message = str(exc.detail) if exc.detail else STATUS_NAMES.get(status, "Error")
    return JSONResponse(envelope(status, message), status_code=status, headers=exc.headers)


class LastResort:
    """The handler of unexpected exceptions: a 500 envelope, counted so tests can see it.

    It carries ``Connection: close``: the server closes the connection after it, and the
    client knows not to send another request on it (nothing is left half-read).
    """

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, request: Request, exc: Exception) -> Response:
        self.count += 1
        logger.error(
            "unhandled error on %s %s: %s",
            request.method,
            request.url.path,
            type(exc).__name__,
            exc_info=exc,
        )
        return JSONResponse(
            envelope(500, "Internal server error"),
            status_code=500,
            headers={"Connection": "close"},
        )
