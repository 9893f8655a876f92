"""The SSE adapter: any split of the byte stream parses to the same events; pings are dropped."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.api._events import Done, SimulationFailed, Turn, parse_event
from evalkit.api._sse import DeadlineReached, SseEvent, iter_events

TURNS = [
    {"index": 1, "role": "agent", "text": "السلام علیکم! میں کلینک سے بات کر رہی ہوں۔"},
    {"index": 2, "role": "caller", "text": "Jee, boliye.\nKaun?"},
    {"index": 3, "role": "agent", "text": "Aap ka appointment kal 10 baje hai 👍"},
]
DONE = {
    "personaId": "p-1",
    "personaLabel": "Cooperative",
    "archetype": "happy",
    "path": "negative",
    "turns": [{"speaker": t["role"], "text": t["text"]} for t in TURNS],
}


def _frame(event: str, data: dict[str, object]) -> str:
    lines = json.dumps(data, ensure_ascii=False).split("\n")
    return f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


def _stream_text(newline: str = "\n") -> str:
    body = ": ping\n\n"
    for turn in TURNS:
        body += _frame("turn", turn) + ": ping\n\n"
    body += _frame("done", DONE)
    return body.replace("\n", newline)


def _response(chunks: list[bytes]) -> httpx.Response:
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream; charset=utf-8"},
        stream=httpx.ByteStream(b"".join(chunks)) if len(chunks) == 1 else _Chunks(chunks),
    )


class _Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield from self._chunks


def _events(chunks: list[bytes]) -> list[SseEvent]:
    return list(iter_events(_response(chunks), time.monotonic() + 60))


EXPECTED = _events([_stream_text().encode()])


def test_whole_stream_parses_to_typed_events() -> None:
    typed = [parse_event(e.event, json.loads(e.data)) for e in EXPECTED]
    assert [type(e) for e in typed] == [Turn, Turn, Turn, Done]
    assert typed[1] == Turn(2, "caller", "Jee, boliye.\nKaun?")
    done = typed[-1]
    assert isinstance(done, Done)
    assert done.persona_label == "Cooperative"
    assert [t.text for t in done.turns] == [t["text"] for t in TURNS]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_byte_split_gives_same_events(data: st.DataObject) -> None:
    raw = _stream_text(data.draw(st.sampled_from(["\n", "\r\n", "\r"]))).encode()
    cuts = sorted(data.draw(st.sets(st.integers(1, len(raw) - 1), max_size=40)))
    chunks = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert _events(chunks) == EXPECTED


def test_error_event_is_simulation_failed() -> None:
    raw = (_frame("turn", TURNS[0]) + _frame("error", {"message": "ceiling reached"})).encode()
    events = [parse_event(e.event, json.loads(e.data)) for e in _events([raw])]
    assert events[-1] == SimulationFailed("ceiling reached")


def test_deadline_checked_on_every_chunk_pings_included() -> None:
    raw = [b": ping\n\n"] * 3
    response = _response(raw)
    with pytest.raises(DeadlineReached):
        list(iter_events(response, time.monotonic() - 1))


def test_unknown_event_name_is_none() -> None:
    assert parse_event("progress", {"x": 1}) is None
