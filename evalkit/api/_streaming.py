"""The simulate stream (E9) as sync and async iterators of typed events.

Rules kept here: exactly one terminal event ends a stream (and the connection is closed as soon
as it arrives); a stream that ends or breaks without one raises
:class:`~evalkit.StreamDropped` carrying the turns received; the total deadline raises
:class:`~evalkit.api.StreamDeadlineExceeded`; closing or cancelling the iterator closes the
connection at once, which tells the service to stop the run (and its spend).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx

from ._events import (
    SimulationEvent,
    TerminalEvent,
    Transcript,
    Turn,
    parse_event,
)
from ._exceptions import StreamDeadlineExceeded, StreamDropped
from ._sse import DeadlineReached, SseEvent, aiter_events, iter_events

logger = logging.getLogger("evalkit.api")


class _StreamState:
    """Bookkeeping shared by both twins: turns so far, timings, the terminal event."""

    __slots__ = ("deadline", "first_turn_at", "outcome", "started_at", "turn_at_s", "turns")

    def __init__(self, deadline_s: float) -> None:
        self.started_at = time.monotonic()
        self.deadline = self.started_at + deadline_s
        self.first_turn_at: float | None = None
        self.turns: list[Turn] = []
        self.turn_at_s: list[float] = []  # arrival of each turn, seconds from the request
        self.outcome: TerminalEvent | None = None

    def accept(self, sse: SseEvent) -> SimulationEvent | None:
        """The typed event for ``sse`` (None to skip it); raises StreamDropped on bad data."""
        try:
            data = json.loads(sse.data) if sse.data else {}
            if not isinstance(data, dict):
                raise TypeError("event data is not an object")
            event = parse_event(sse.event, data)
        except (ValueError, TypeError, KeyError) as exc:
            raise StreamDropped(f"malformed {sse.event!r} event: {exc}", self.turns) from None
        if event is None:
            logger.debug("skipping unknown simulate event %r", sse.event)
        elif isinstance(event, Turn):
            arrived = time.monotonic()
            if self.first_turn_at is None:
                self.first_turn_at = arrived
            self.turns.append(event)
            self.turn_at_s.append(arrived - self.started_at)
        else:
            self.outcome = event
        return event

    def ended_without_terminal(self, cause: BaseException | None = None) -> StreamDropped:
        if isinstance(cause, DeadlineReached):
            return StreamDeadlineExceeded(
                "simulate stream passed its total deadline", self.turns, self.turn_at_s
            )
        reason = "simulate stream ended without a terminal event"
        if cause is not None:
            reason = (
                f"simulate stream broke without a terminal event ({type(cause).__name__}: {cause})"
            )
        return StreamDropped(reason, self.turns, self.turn_at_s)

    def transcript(self) -> Transcript:
        assert self.outcome is not None
        now = time.monotonic()
        first = None if self.first_turn_at is None else self.first_turn_at - self.started_at
        return Transcript(
            tuple(self.turns), self.outcome, first, now - self.started_at, tuple(self.turn_at_s)
        )


class _StreamBase:
    """What both twins hold: how to open the request, the deadline, and the stream's state."""

    def __init__(self, opener: Callable[[], Any], deadline_s: float) -> None:
        self._opener = opener
        self._deadline_s = deadline_s
        self._state: _StreamState | None = None
        self._response: httpx.Response | None = None
        self._closed = False

    @property
    def turns(self) -> list[Turn]:
        """The turns received so far."""
        return list(self._state.turns) if self._state else []

    @property
    def outcome(self) -> TerminalEvent | None:
        """The terminal event, once received."""
        return self._state.outcome if self._state else None


class SimulationStream(_StreamBase):
    """A simulate stream: iterate it for :class:`Turn` events then one terminal event.

    Use it as a context manager (or call :meth:`close`) so an abandoned stream closes its
    connection at once. :meth:`collect` reads it to the end and returns a :class:`Transcript`.
    """

    def __init__(self, opener: Callable[[], httpx.Response], deadline_s: float) -> None:
        super().__init__(opener, deadline_s)
        self._events: Iterator[SseEvent] | None = None

    def open(self) -> None:
        """Send the request (with the retry policy) and wait for the stream to start."""
        if self._response is None and not self._closed:
            self._state = _StreamState(self._deadline_s)
            self._response = self._opener()
            self._events = iter_events(self._response, self._state.deadline)

    def __enter__(self) -> SimulationStream:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> SimulationStream:
        return self

    def __next__(self) -> SimulationEvent:
        if self._closed:
            raise StopIteration
        self.open()
        assert self._events is not None
        assert self._state is not None
        state = self._state
        try:
            while True:
                try:
                    sse = next(self._events)
                except StopIteration:
                    raise state.ended_without_terminal() from None
                except (httpx.TransportError, DeadlineReached) as exc:
                    raise state.ended_without_terminal(exc) from exc
                event = state.accept(sse)
                if event is None:
                    continue
                if state.outcome is not None:
                    self.close()
                return event
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the connection now (the service stops the conversation)."""
        self._closed = True
        if self._response is not None:
            self._response.close()

    def collect(self) -> Transcript:
        """Read the stream to its terminal event and return the whole transcript."""
        with self:
            for _ in self:
                pass
        assert self._state is not None
        if self._state.outcome is None:  # closed early by the caller
            raise self._state.ended_without_terminal()
        return self._state.transcript()

    def __del__(self) -> None:
        if not self._closed and self._response is not None:
            self._response.close()


class AsyncSimulationStream(_StreamBase):
    """The async twin of :class:`SimulationStream` (``async with`` / ``async for``)."""

    def __init__(self, opener: Callable[[], Awaitable[httpx.Response]], deadline_s: float) -> None:
        super().__init__(opener, deadline_s)
        self._events: AsyncIterator[SseEvent] | None = None

    async def open(self) -> None:
        """Send the request (with the retry policy) and wait for the stream to start."""
        if self._response is None and not self._closed:
            self._state = _StreamState(self._deadline_s)
            self._response = await self._opener()
            self._events = aiter_events(self._response, self._state.deadline)

    async def __aenter__(self) -> AsyncSimulationStream:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> AsyncSimulationStream:
        return self

    async def __anext__(self) -> SimulationEvent:
        if self._closed:
            raise StopAsyncIteration
        try:
            await self.open()
            assert self._events is not None
            assert self._state is not None
            state = self._state
            while True:
                try:
                    sse = await anext(self._events)
                except StopAsyncIteration:
                    raise state.ended_without_terminal() from None
                except (httpx.TransportError, DeadlineReached) as exc:
                    raise state.ended_without_terminal(exc) from exc
                event = state.accept(sse)
                if event is None:
                    continue
                if state.outcome is not None:
                    await self.aclose()
                return event
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the connection now (the service stops the conversation)."""
        if self._closed and self._response is None:
            return
        self._closed = True
        response, self._response = self._response, None
        events, self._events = self._events, None
        if events is not None and hasattr(events, "aclose"):
            with contextlib.suppress(httpx.HTTPError, RuntimeError):
                await events.aclose()
        if response is not None:
            await asyncio.shield(response.aclose())

    async def collect(self) -> Transcript:
        """Read the stream to its terminal event and return the whole transcript."""
        async with self:
            async for _ in self:
                pass
        assert self._state is not None
        if self._state.outcome is None:
            raise self._state.ended_without_terminal()
        return self._state.transcript()
