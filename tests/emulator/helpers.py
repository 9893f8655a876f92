"""Helpers of the emulator tests: configs, controllable dialogue backends, an SSE reader that
keeps raw lines (pings included), clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from evalkit.emulator import EmulatorServer, serve


def make_config(
    instructions: str = "You remind {{name}} of an appointment.", **extra: Any
) -> dict[str, Any]:
    """A valid assistant config."""
    return {
        "agent": {"instructions": instructions, "initialGreeting": True},
        "llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}},
        **extra,
    }


@dataclass(frozen=True)
class Line:
    role: str
    text: str


@dataclass
class FakeBackend:
    """Yields ``turns`` utterances (or forever when ``turns`` is None), every ``pause`` seconds;
    records seeds and setups, counts utterances produced and whether the run was closed, and
    how each conversation ended (``ended``: ``"exhausted"``, or the exception that stopped it)."""

    turns: int | None = 4
    pause: float = 0.0
    seeds: list[int] = field(default_factory=list)
    setups: list[Any] = field(default_factory=list)
    produced: int = 0
    closed: int = 0
    ended: list[str] = field(default_factory=list)

    async def conversation(self, setup: Any) -> AsyncIterator[Line]:
        self.seeds.append(setup.seed)
        self.setups.append(setup)
        try:
            i = 0
            while self.turns is None or i < self.turns:
                if self.pause:
                    await asyncio.sleep(self.pause)
                self.produced += 1
                yield Line("agent" if i % 2 == 0 else "caller", f"line {i} seed {setup.seed}")
                i += 1
            self.ended.append("exhausted")
        except BaseException as exc:  # cancelled, or closed by its consumer
            self.ended.append(type(exc).__name__)
            raise
        finally:
            self.closed += 1


@dataclass
class Sse:
    """A parsed event stream: (event, data) pairs in order and every raw line."""

    status: int
    events: list[tuple[str, Any]]
    raw: list[str]

    @property
    def terminals(self) -> list[tuple[str, Any]]:
        return [e for e in self.events if e[0] in ("done", "error")]


def parse_sse(lines: list[str]) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    name, data = "message", []
    for line in lines:
        if line == "":
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        events.append((name, json.loads("\n".join(data))))
    return events


def simulate(client: httpx.Client, assistant_id: str, body: Any | None = None) -> Sse:
    """Run one simulate request to its end; a JSON error answer gives no events."""
    path = f"/realtime-assistants/builds/{assistant_id}/simulate"
    with client.stream("POST", path, json=body if body is not None else {}) as response:
        if response.status_code != 200:
            response.read()
            return Sse(response.status_code, [("http", response.json())], [])
        raw = list(response.iter_lines())
    return Sse(200, parse_sse(raw), raw)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def client_for(server: EmulatorServer, key: str | None = None) -> httpx.Client:
    return httpx.Client(
        base_url=server.base_url,
        headers=auth(key or server.api_key),
        timeout=httpx.Timeout(30.0),
    )


def create_assistant(client: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {"name": "Reminder", "config": make_config(), **fields}
    response = client.post("/realtime-assistants", json=body)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


BRIEF = {
    "context": "The clinic is calling about tomorrow's appointment.",
    "sampleRows": [{"name": "Ayesha", "slot": "10:30"}, {"name": "Bilal", "slot": "11:00"}],
}


@dataclass(frozen=True)
class FuzzTarget:
    """An emulator seeded with one built and one plain public assistant and a contact list."""

    emu: EmulatorServer
    client: httpx.Client
    built_id: str
    plain_id: str
    list_id: str


@contextlib.contextmanager
def fuzz_target(name: str, seed: int) -> Iterator[FuzzTarget]:
    """A fast emulator (no synthesis limit) holding the resources generated requests aim at."""
    with (
        serve(time_scale=0.0005, seed=seed) as emu,
        httpx.Client(base_url=emu.base_url, headers=auth(emu.api_key), timeout=30) as client,
    ):
        emu.set_synthesis_limit(None)
        built = emu.build(name, BRIEF, "Remind {{name}}.", public=True)
        plain = create_assistant(client, public=True)
        listed = emu.create_contact_list(
            {"name": "l", "sourceKind": "paste", "summary": {"willBeCalled": 0}}
        )
        yield FuzzTarget(
            emu,
            client,
            built["realtimeAssistantId"],
            plain["realtimeAssistantId"],
            listed["listId"],
        )
