"""The one retry policy: what is retried, how long to wait, how sleeping happens, and the one
loop that makes the attempts (:meth:`RetryPolicy.run`, :meth:`RetryPolicy.arun`).

Retried: connect errors (the request never reached the service), 429 (honouring Retry-After)
and the synthesis rate-limit message, and 502/503/504 for idempotent calls and for simulate
before its stream starts. Read errors are retried only for idempotent calls. Never retried:
400, 401, 402, 403, 404, or anything after a stream has started (the runner re-runs a dropped
conversation as a new one; the spec has no resume).

Every retrying caller (the clients' requests, the runner's re-run of a dropped stream, the
chat endpoints of the judge and the proposer) goes through the one loop: the caller says what
an attempt is and, per error, whether to wait and try again, try again at once, or stop.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypeVar

import httpx

from ._exceptions import ApiError, RateLimitError

RETRYABLE_STATUS = frozenset({502, 503, 504})

T = TypeVar("T")

#: What the loop does after a failed attempt: ``wait`` (the policy's backoff, or Retry-After)
#: then try again, try again ``now`` (the other side answered, just not usefully), or ``stop``
#: and raise the error.
RetryDecision: TypeAlias = Literal["wait", "now", "stop"]
#: Told about every retry: the failed attempt's number (1-based), its error, the wait.
OnRetry: TypeAlias = Callable[[int, Exception, float], None]


def _no_sleep(_: float) -> None:
    return None


async def _no_async_sleep(_: float) -> None:
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter: ``min(max_wait, initial_wait * 2**n) + U(0, jitter)``.

    ``sleep``/``async_sleep`` are injectable so tests can switch waiting off
    (:meth:`RetryPolicy.no_wait`). ``seed`` makes the jitter reproducible.
    """

    max_attempts: int = 4
    initial_wait: float = 0.5
    max_wait: float = 20.0
    jitter: float = 0.5
    max_retry_after: float = 60.0
    seed: int | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    async_sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")

    @classmethod
    def no_wait(cls, max_attempts: int = 4) -> RetryPolicy:
        """A policy that retries without sleeping (for tests)."""
        return cls(max_attempts=max_attempts, sleep=_no_sleep, async_sleep=_no_async_sleep)

    @classmethod
    def never(cls) -> RetryPolicy:
        """A policy that makes exactly one attempt."""
        return cls(max_attempts=1)

    def rng(self) -> random.Random:
        """A jitter source of its own (seeded when ``seed`` is set)."""
        return random.Random(self.seed)

    def wait_for(self, attempt: int, error: BaseException, rng: random.Random) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_retry_after)
        backoff = min(self.max_wait, self.initial_wait * 2 ** (attempt - 1))
        return float(backoff + rng.uniform(0.0, self.jitter))

    def run(
        self,
        attempt: Callable[[int], T],
        *,
        decide: Callable[[Exception], RetryDecision] | None = None,
        attempts: int | None = None,
        rng: random.Random | None = None,
        on_retry: OnRetry | None = None,
    ) -> T:
        """``attempt(n)`` for n = 1, 2, ... until it returns, ``decide`` says ``stop`` (the
        error is raised) or ``attempts`` (default ``max_attempts``) are spent (the last error
        is raised). ``decide`` defaults to the service's rules for an idempotent call
        (:func:`default_decision`); only :class:`Exception` is caught, so Ctrl-C and
        cancellation end the loop at once."""
        rng = rng or self.rng()
        n = 0
        while True:
            n += 1
            try:
                return attempt(n)
            except Exception as exc:
                wait = self._after_failure(n, exc, decide, attempts, rng, on_retry)
            if wait is not None:
                self.sleep(wait)

    async def arun(
        self,
        attempt: Callable[[int], Awaitable[T]],
        *,
        decide: Callable[[Exception], RetryDecision] | None = None,
        attempts: int | None = None,
        rng: random.Random | None = None,
        on_retry: OnRetry | None = None,
    ) -> T:
        """:meth:`run` for a coroutine function (waits with ``async_sleep``)."""
        rng = rng or self.rng()
        n = 0
        while True:
            n += 1
            try:
                return await attempt(n)
            except Exception as exc:
                wait = self._after_failure(n, exc, decide, attempts, rng, on_retry)
            if wait is not None:
                await self.async_sleep(wait)

    def _after_failure(
        self,
        n: int,
        exc: Exception,
        decide: Callable[[Exception], RetryDecision] | None,
        attempts: int | None,
        rng: random.Random,
        on_retry: OnRetry | None,
    ) -> float | None:
        """The seconds to wait before attempt ``n + 1`` (None: at once); raises ``exc`` when
        the loop stops."""
        decision = (decide or default_decision)(exc)
        if decision == "stop" or n >= (attempts if attempts is not None else self.max_attempts):
            raise exc
        wait = self.wait_for(n, exc, rng) if decision == "wait" else None
        if on_retry is not None:
            on_retry(n, exc, wait or 0.0)
        return wait


def default_decision(error: BaseException, *, idempotent: bool = True) -> RetryDecision:
    """``wait`` for what the policy retries (:func:`is_retryable`), else ``stop``."""
    return "wait" if is_retryable(error, idempotent=idempotent) else "stop"


def is_retryable(error: BaseException, *, idempotent: bool) -> bool:
    """Whether ``error`` (from one attempt) may be retried under the policy."""
    if isinstance(error, RateLimitError):
        return True
    if isinstance(error, ApiError):
        return idempotent and error.status_code in RETRYABLE_STATUS
    if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return True
    if isinstance(error, httpx.ReadError | httpx.RemoteProtocolError | httpx.ReadTimeout):
        return idempotent
    return False


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
