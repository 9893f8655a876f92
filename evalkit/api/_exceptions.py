"""The service's errors: the ``evalkit.api`` branch of the tree drawn in
:mod:`evalkit._exceptions` (the one root, :class:`~evalkit.EvalkitError`).

No exception's text ever carries an API key: messages go through the one redactor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._exceptions import EvalkitError
from .._util import redact, redact_text

if TYPE_CHECKING:
    from ._events import Turn
    from ._problems import Problem

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConfigurationError",
    "EvalkitError",
    "InvalidRequestError",
    "NotFoundError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "ServiceUnavailableError",
    "StreamDeadlineExceeded",
    "StreamDropped",
    "StreamError",
    "UnexpectedResponseError",
]


class ConfigurationError(EvalkitError):
    """evalkit is not configured well enough to make the call."""


class InvalidRequestError(EvalkitError, ValueError):
    """A request body breaks the spec's limits; nothing was sent.

    ``problems`` lists every failed field (``problem.field`` is a dotted path).
    """

    def __init__(self, problems: Sequence[Problem], what: str = "request") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(
            f"invalid {what} ({len(self.problems)} problem(s)); nothing was sent:\n{lines}"
        )

    @property
    def fields(self) -> list[str]:
        """The dotted paths of the failed fields."""
        return [p.field for p in self.problems]


class ApiConnectionError(EvalkitError):
    """The service could not be reached, or the connection broke before an answer."""


class ApiTimeoutError(ApiConnectionError):
    """A request timed out."""


class UnexpectedResponseError(EvalkitError):
    """The service answered with success, but the body does not have the spec's shape."""


class ApiError(EvalkitError):
    """The service answered with an error.

    ``messages`` is always a list (the envelope's ``message`` may be a string or an array);
    ``error`` is the envelope's status name and may be ``None`` (the 503 of E8 has none).
    """

    def __init__(
        self,
        status_code: int,
        messages: Sequence[str],
        error: str | None = None,
        body: Any = None,
        *,
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.messages = [redact_text(str(m)) for m in messages]
        self.error = error
        self.body = redact(body)  # an echoed credential stays masked in reprs and pickles
        self.method = method
        self.url = url
        head = f"{status_code} {error}" if error else str(status_code)
        where = f" ({method} {url})" if method and url else ""
        text = "; ".join(self.messages) if self.messages else "(no message)"
        super().__init__(f"{head}{where}: {text}")


class BadRequestError(ApiError):
    """400: the service rejected the body."""


class AuthenticationError(ApiError):
    """401: a missing or invalid credential."""


class PaymentRequiredError(ApiError):
    """402: the organization has no credits."""


class PermissionDeniedError(ApiError):
    """403: the credential has no access, or the assistant is not public."""


class NotFoundError(ApiError):
    """404: the resource does not exist (or has no build artifacts)."""


class RateLimitError(ApiError):
    """429, or the synthesis message ``Rate limit exceeded, please try again later``.

    ``retry_after`` holds the Retry-After header in seconds when the service sent one.
    """

    retry_after: float | None = None


class ServiceUnavailableError(ApiError):
    """503: the service (or a published version) is not ready yet."""


class ServerError(ApiError):
    """Any other 5xx."""


class StreamError(EvalkitError):
    """A simulate stream broke after it started."""


class StreamDropped(StreamError):
    """The stream ended, or broke, without a terminal event.

    ``turns`` holds the turns received before it ended (``turn_at_s``: their arrival, seconds
    from the request). There is no resume: the spec says the run must be started again
    (evalkit's runner does so as a new conversation).
    """

    def __init__(
        self, message: str, turns: Sequence[Turn] = (), turn_at_s: Sequence[float] = ()
    ) -> None:
        self.turns = list(turns)
        self.turn_at_s = list(turn_at_s)
        super().__init__(f"{message} (after {len(self.turns)} turn(s))")


class StreamDeadlineExceeded(StreamDropped):
    """The stream's total deadline passed before a terminal event."""
