"""One planned conversation to a final status: a dropped stream is run again as a new
conversation, waiting as the client's one retry policy says."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from .._util import now
from ..api import (
    ApiConnectionError,
    ApiError,
    AsyncClient,
    Done,
    InvalidRequestError,
    RetryDecision,
    StreamDropped,
    Transcript,
    UnexpectedResponseError,
)
from ..grid import ConversationSlot
from ..store import ConversationRecord, TurnRecord, dump_variables, transcript_hash
from ..targets import ResolvedTarget
from ._errors import FATAL_ERRORS

__all__ = ["ConversationRunner"]

logger = logging.getLogger("evalkit.runner")

#: A request error after the client's retries: the conversation is recorded as ``failed``.
_FAILED = (ApiError, ApiConnectionError, UnexpectedResponseError, InvalidRequestError)

Outcome = tuple[str, str | None, list[TurnRecord], float | None, str | None]


class ConversationRunner:
    """Runs planned conversations of one run against one simulate target."""

    def __init__(
        self,
        client: AsyncClient,
        simulate_id: str,
        resolved: ResolvedTarget,
        run_id: str,
        max_attempts: int,
    ) -> None:
        self.client = client
        self.simulate_id = simulate_id
        self.resolved = resolved
        self.run_id = run_id
        self.max_attempts = max_attempts
        self._retry = client.retry
        self._rng = client.retry.rng()

    async def run(
        self, slot: ConversationSlot, client: AsyncClient | None = None
    ) -> tuple[ConversationRecord, list[TurnRecord], Exception | None]:
        """Simulate ``slot`` (re-running dropped streams) and return its record, its turns and,
        for a ``failed`` one, the request error (the circuit breaker reads it).

        ``client`` (default: the runner's) carries the streams: the runner gives each worker
        its own connection slot.
        """
        client = client or self.client
        cell = slot.cell
        kwargs = cell.simulate_kwargs()
        started_at = now()
        t0 = time.monotonic()  # duration_s spans every attempt, like started_at
        attempts = 0
        failure: Exception | None = None

        async def attempt(n: int) -> Transcript:
            nonlocal attempts
            attempts = n
            return await client.simulate(self.simulate_id, **kwargs).collect()

        def rerun(n: int, exc: Exception, wait: float) -> None:
            logger.info(
                "conversation %s dropped (%s); running it again in %.2fs",
                slot.conversation_id,
                exc,
                wait,
            )

        try:
            transcript = await self._retry.arun(
                attempt,
                decide=_dropped_again,
                attempts=self.max_attempts,
                rng=self._rng,
                on_retry=rerun,
            )
        except StreamDropped as exc:
            turns = _turn_records(exc.turns, exc.turn_at_s)
            outcome: Outcome = ("dropped", str(exc), turns, None, None)
        except FATAL_ERRORS:
            raise
        except _FAILED as exc:
            outcome, failure = ("failed", str(exc), [], None, None), exc
        else:
            outcome = _outcome(transcript)
        status, message, turns, first_turn_s, persona_id = outcome
        record = ConversationRecord(
            run_id=self.run_id,
            conversation_id=slot.conversation_id,
            cell_id=cell.cell_id,
            repeat=slot.repeat,
            persona_label=cell.persona.label,
            variables=cell.variables_json or dump_variables(None),
            context=cell.context,
            status=status,  # type: ignore[arg-type]
            error_message=message,
            attempts=attempts,
            n_turns=len(turns),
            ended_by=turns[-1].role if turns else None,
            first_turn_s=first_turn_s,
            duration_s=time.monotonic() - t0,
            started_at=started_at,
            finished_at=now(),
            transcript_hash=transcript_hash(turns) if turns else None,
            assistant_version=self.resolved.version,
            target=self.resolved.label,
            persona_id=persona_id,
            persona_tags=cell.persona.tags_json,
        )
        return record, turns, failure


def _dropped_again(exc: Exception) -> RetryDecision:
    """A dropped stream is run again as a new conversation; every other error is final here
    (the client has retried its requests already)."""
    return "wait" if isinstance(exc, StreamDropped) else "stop"


def _outcome(transcript: Transcript) -> Outcome:
    result = transcript.outcome
    streamed = _turn_records(transcript.turns, transcript.turn_at_s)
    if isinstance(result, Done):
        turns = streamed
        if result.turns:  # the `done` event's transcript is the record; timings from the stream
            at_s = {t.index: t.at_s for t in streamed}
            turns = [
                TurnRecord(i, t.speaker, t.text, at_s.get(i)) for i, t in enumerate(result.turns, 1)
            ]
        return "done", None, turns, transcript.first_turn_s, result.persona_id or None
    return "error", result.message, streamed, transcript.first_turn_s, None


def _turn_records(turns: Sequence[Any], at_s: Sequence[float]) -> list[TurnRecord]:
    """Streamed turns as records, each with its arrival time where one was recorded."""
    if len(at_s) != len(turns):
        return [TurnRecord(t.index, t.role, t.text) for t in turns]
    return [TurnRecord(t.index, t.role, t.text, a) for t, a in zip(turns, at_s, strict=True)]
