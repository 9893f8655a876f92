"""``RefineOptions``: how one refine build is waited for, and the brief it replaces."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from .._util import PollPolicy
from ._errors import RefineError

__all__ = ["DEFAULT_POLL", "RefineOptions", "Sleep"]

Sleep = Callable[[float], Awaitable[None]]

DEFAULT_POLL: Final = PollPolicy(interval=5.0, backoff=1.5, max_interval=30.0, timeout=900.0)
"""Builds take minutes: first look after 5 s, then every 7.5 s, ... up to every 30 s."""


@dataclass(frozen=True)
class RefineOptions:
    """Options of :func:`refine_and_wait`.

    ``timeout`` (seconds; None: ``poll.timeout``, 900 by default) bounds the wait for the
    build; ``poll`` (a :class:`~evalkit.PollPolicy`) paces it; ``brief`` replaces the stored
    build brief for this and later builds (the whole brief, a mapping); ``wait_for_inflight``
    waits for a build evalkit recorded as in flight for the assistant instead of refusing;
    ``sleep`` replaces ``asyncio.sleep`` while waiting (tests).
    """

    timeout: float | None = None
    poll: PollPolicy | None = None
    brief: Mapping[str, Any] | None = field(default=None, compare=False)
    wait_for_inflight: bool = False
    sleep: Sleep | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.policy  # noqa: B018  (PollPolicy checks the timeout, the one check of it)
        if self.brief is not None and not isinstance(self.brief, Mapping):
            raise RefineError(
                "RefineOptions.brief must be a mapping (the whole brief), got "
                f"{type(self.brief).__name__}"
            )

    @property
    def policy(self) -> PollPolicy:
        """The poll policy with ``timeout`` applied."""
        policy = self.poll or DEFAULT_POLL
        return policy if self.timeout is None else replace(policy, timeout=self.timeout)
