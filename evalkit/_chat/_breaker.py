"""While the judge endpoint looks down, one call probes it and the other tasks wait for that
probe instead of each waiting out its own deadline; when the probe fails they fail fast.

Without this, a judge that stops answering (or trickles bytes) costs every remaining task a full
``JudgeOptions.timeout``: hundreds of conversations, hundreds of deadlines. With it, grading
ends within a few deadlines whatever the number of conversations: the calls already in flight
time out together, one probe follows, and the rest become ``error`` verdicts at once (they are
not cached, so grading again once the endpoint answers asks them). A probe that gets any answer
(even a malformed one) shows the endpoint up, and the waiting tasks go on as usual. After a
failed probe another may be made once ``interval`` seconds have passed.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal

__all__ = ["Admission", "ProbeGate"]

#: ``probe``: make the call that probes; ``up``: the probe got an answer, call as usual;
#: ``down``: the probe failed, do not call.
Admission = Literal["probe", "up", "down"]


@dataclass(eq=False)
class ProbeGate:
    """One grading batch's probe of a judge endpoint that looks down (one event loop)."""

    interval: float
    reason: str = ""
    _probe: asyncio.Future[bool] | None = None
    _failed_at: float | None = None
    _failed_by: object = None

    async def admit(self, task: object) -> Admission:
        """Whether ``task`` may call the endpoint that looks down (see :data:`Admission`).

        The task whose probe failed may probe again (its own retries, as its policy says);
        any other fails fast until ``interval`` has passed since that failure.
        """
        if self._probe is not None and not self._probe.done():
            return "up" if await asyncio.shield(self._probe) else "down"
        recent = self._failed_at is not None and time.monotonic() - self._failed_at < self.interval
        if recent and task is not self._failed_by:
            return "down"
        self._probe = asyncio.get_running_loop().create_future()
        return "probe"

    def settle(self, task: object, up: bool, reason: str = "") -> None:
        """The outcome of ``task``'s probe: ``up`` when the endpoint answered at all."""
        if self._probe is not None and not self._probe.done():
            self._probe.set_result(up)
        self._failed_at = None if up else time.monotonic()
        self._failed_by = None if up else task
        if not up:
            self.reason = reason or self.reason
