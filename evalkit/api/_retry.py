"""The one retry policy: what is retried, how long to wait, and how sleeping happens.

Retried: connect errors (the request never reached the service), 429 (honouring Retry-After)
and the synthesis rate-limit message, and 502/503/504 for idempotent calls and for simulate
before its stream starts. Read errors are retried only for idempotent calls. Never retried:
400, 401, 402, 403, 404, or anything after a stream has started (the runner re-runs a dropped
conversation as a new one; the spec has no resume).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from ._exceptions import ApiError, RateLimitError

RETRYABLE_STATUS = frozenset({502, 503, 504})


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
