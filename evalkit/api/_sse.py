"""The event-stream adapter: the only module that knows how SSE bytes are parsed.

It uses httpx-sse's decoders (so ``: ping`` comments are dropped as the SSE standard says) and
adds what httpx-sse does not do: a total deadline checked on every chunk received, pings
included, so a stream kept alive by keepalives alone still ends on time. Changing the HTTP or
SSE stack means changing this module only.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import NamedTuple

import httpx
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

EVENT_STREAM = "text/event-stream"


class SseEvent(NamedTuple):
    """One decoded event: its name (``message`` when the stream gave none) and data text."""

    event: str
    data: str


class DeadlineReached(Exception):
    """The stream's total deadline passed while it was still open."""


def is_event_stream(response: httpx.Response) -> bool:
    """True when the response says it is an event stream."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.partition(";")[0].strip() == EVENT_STREAM


def _decode(text: str, lines: SSELineDecoder, decoder: SSEDecoder) -> list[SseEvent]:
    events = []
    for line in lines.decode(text) if text else lines.flush():
        sse = decoder.decode(line)
        if sse is not None:
            events.append(SseEvent(sse.event, sse.data))
    return events


def iter_events(response: httpx.Response, deadline: float) -> Iterator[SseEvent]:
    """Decode a streaming response into events until it ends; ``deadline`` is monotonic time."""
    lines, decoder = SSELineDecoder(), SSEDecoder()
    for text in response.iter_text():
        if time.monotonic() > deadline:
            raise DeadlineReached
        if text:
            yield from _decode(text, lines, decoder)
    yield from _decode("", lines, decoder)


async def aiter_events(response: httpx.Response, deadline: float) -> AsyncIterator[SseEvent]:
    """The async twin of :func:`iter_events`."""
    lines, decoder = SSELineDecoder(), SSEDecoder()
    async for text in response.aiter_text():
        if time.monotonic() > deadline:
            raise DeadlineReached
        if text:
            for event in _decode(text, lines, decoder):
                yield event
    for event in _decode("", lines, decoder):
        yield event
