"""The breaker of a chat endpoint: whether it looks down, and while it does, one call probes it
and the other asks wait for that probe instead of each waiting out its own deadline.

Without this, an endpoint that stops answering (or trickles bytes) costs every remaining ask a
full deadline: hundreds of conversations, hundreds of deadlines. With it, a batch ends within
a deadline or two whatever its size: the calls already in flight time out together, and the
rest fail at once (an error verdict is not cached, so grading again asks them).

The endpoint looks down after a connection error, a 5xx or a missed deadline (:class:`Health`);
any answer at all shows it up again. A missed deadline during which the endpoint answered
nothing (no call of this endpoint got any answer since the missed one started) is itself a
failed probe: the first deadline already tells that the endpoint is down, so nobody waits out
a second one. A probe that gets any answer (even a malformed one) shows the endpoint up, and
the waiting asks go on as usual. After a failed probe another may be made once ``interval``
seconds have passed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Admission", "Health", "ProbeGate"]

#: ``probe``: make the call that probes; ``up``: the probe got an answer, call as usual;
#: ``down``: the probe failed, do not call.
Admission = Literal["probe", "up", "down"]


@dataclass(eq=False)
class Health:
    """What an endpoint (and every copy of its user) has shown: whether it looks down, and
    when it last answered anything (a success or an error answer)."""

    down: bool = False
    last_answer: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def answered(self, *, ok: bool) -> None:
        """The endpoint answered (``ok``: successfully, so it no longer looks down)."""
        with self.lock:
            self.last_answer = time.monotonic()
            if ok:
                self.down = False

    def silent_since(self, started: float) -> bool:
        """Whether nothing was answered since ``started`` (a ``time.monotonic()`` reading)."""
        with self.lock:
            return self.last_answer is None or self.last_answer < started


@dataclass(eq=False)
class ProbeGate:
    """One batch's probe of an endpoint that looks down (one event loop)."""

    interval: float
    reason: str = ""
    _probe: asyncio.Future[bool] | None = None
    _failed_at: float | None = None
    _failed_by: object = None

    async def admit(self, asker: object) -> Admission:
        """Whether ``asker`` may call the endpoint that looks down (see :data:`Admission`).

        The asker whose probe failed may probe again (its own retries, as its policy says);
        any other fails fast until ``interval`` has passed since that failure.
        """
        if self._probe is not None and not self._probe.done():
            return "up" if await asyncio.shield(self._probe) else "down"
        recent = self._failed_at is not None and time.monotonic() - self._failed_at < self.interval
        if recent and asker is not self._failed_by:
            return "down"
        self._probe = asyncio.get_running_loop().create_future()
        return "probe"

    def settle(self, asker: object, up: bool, reason: str = "") -> None:
        """The outcome of ``asker``'s probe (or of a call that counts as one: a deadline
        missed in silence): ``up`` when the endpoint answered at all."""
        if self._probe is not None and not self._probe.done():
            self._probe.set_result(up)
        self._failed_at = None if up else time.monotonic()
        self._failed_by = None if up else asker
        if not up:
            self.reason = reason or self.reason
