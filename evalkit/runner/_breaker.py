"""The runner's circuit breaker: a service that cannot be reached stops the run.

Without it, a grid of thousands burns through its attempts in seconds once the service
vanishes, recording every remaining conversation as ``failed``. With it, a conversation that
could not connect (after the client's retries) is held back, not recorded; when
``limit`` of them come in a row, or every worker's latest one could not connect, the run stops
with :class:`ServiceUnreachable` and the held ones are dropped, so a resume runs them. The
first conversation that reaches the service again breaks the streak, and the held ones are
recorded ``failed`` as they were (a blip, not an outage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from ..api import ApiConnectionError
from ..store import ConversationRecord, TurnRecord
from ._errors import ServiceUnreachable

__all__ = ["CircuitBreaker", "could_not_connect"]

Finished = tuple[ConversationRecord, list[TurnRecord]]

#: transport failures that mean the service was never reached (not a slow or broken answer)
_UNREACHED = (httpx.ConnectError, httpx.ConnectTimeout)


def could_not_connect(error: BaseException | None) -> bool:
    """Whether ``error`` (a conversation's failure) says the service could not be reached."""
    return isinstance(error, ApiConnectionError) and isinstance(error.__cause__, _UNREACHED)


@dataclass
class CircuitBreaker:
    """Counts conversations that could not connect, in a row and per worker.

    ``limit``: that many in a row trip it (0: never; the failures are recorded as they come);
    ``workers``: the workers running; ``address``: the service's base URL, for the error.
    """

    limit: int
    workers: int
    address: str
    held: list[Finished] = field(default_factory=list)
    _down: set[int] = field(default_factory=set)
    _done: set[int] = field(default_factory=set)
    _last: BaseException | None = None

    def settle(
        self, worker: int, finished: Finished, failure: BaseException | None
    ) -> list[Finished]:
        """What to record now for ``worker``'s finished conversation: nothing while a streak
        of unreachable conversations is held, the held ones and this one once the service
        answered again; raises :class:`ServiceUnreachable` when the breaker trips."""
        if not self.limit:
            return [finished]
        if not could_not_connect(failure):
            self._down.clear()
            released, self.held = [*self.held, finished], []
            return released
        self.held.append(finished)
        self._down.add(worker)
        self._last = failure
        if len(self.held) >= self.limit or self._down >= self._active():
            self._trip()
        return []

    def retire(self, worker: int) -> list[Finished]:
        """``worker`` has nothing left to run. When it was the last, the conversations still
        held (a streak too short to trip) are to be recorded as they are, ``failed``."""
        self._done.add(worker)
        if self._active():
            return []
        released, self.held = self.held, []
        return released

    def _active(self) -> set[int]:
        return set(range(self.workers)) - self._done

    def _trip(self) -> None:
        count = len(self.held)
        self.held = []
        raise ServiceUnreachable(self.address, count) from self._last
