"""A poll helper with explicit terminal states, backoff, a timeout and an injectable sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["PollOutcome", "PollPolicy", "apoll"]

T = TypeVar("T")
PollState = Literal["pending", "succeeded", "failed"]


@dataclass(frozen=True, slots=True)
class PollPolicy:
    """How to wait: first interval, growth factor, cap, and the overall timeout (seconds).

    Public as ``evalkit.PollPolicy`` (home :mod:`evalkit.refine`): ``refine_and_wait(...,
    poll=PollPolicy(interval=5, timeout=900))``.
    """

    interval: float = 2.0
    backoff: float = 1.5
    max_interval: float = 30.0
    timeout: float = 600.0

    def __post_init__(self) -> None:
        for name, value, ok, rule in (
            ("interval", self.interval, self.interval > 0, "> 0"),
            ("backoff", self.backoff, self.backoff >= 1, ">= 1"),
            ("max_interval", self.max_interval, self.max_interval > 0, "> 0"),
            ("timeout", self.timeout, self.timeout > 0, "> 0"),
        ):
            if not ok:
                raise ValueError(f"PollPolicy.{name} must be {rule}, got {value}")


@dataclass(frozen=True, slots=True)
class PollOutcome(Generic[T]):
    """How polling ended: ``succeeded``, ``failed`` or ``timed_out``, the last value, polls made."""

    state: Literal["succeeded", "failed", "timed_out"]
    value: T | None
    polls: int
    waited_s: float


async def apoll(
    check: Callable[[], Awaitable[tuple[PollState, T]]],
    policy: PollPolicy = PollPolicy(),
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> PollOutcome[T]:
    """Call ``check`` until it reports a terminal state or ``policy.timeout`` passes."""
    start = clock()
    interval = policy.interval
    polls = 0
    value: T | None = None
    while True:
        state, value = await check()
        polls += 1
        if state != "pending":
            return PollOutcome(state, value, polls, clock() - start)
        left = policy.timeout - (clock() - start)
        if left <= 0:
            return PollOutcome("timed_out", value, polls, clock() - start)
        await sleep(min(interval, left))
        interval = min(interval * policy.backoff, policy.max_interval)
