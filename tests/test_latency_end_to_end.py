"""Latency end to end: a loopback proxy between the runner and the emulator holds back only
agent turn events by a known amount, and compare_latency finds it with an interval that
covers it; an assistant that reasons harder is found slower through the emulator's rules."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.api import AsyncClient
from evalkit.compare import LatencyOptions, Verdict, compare_latency
from evalkit.emulator import EmulatorServer
from evalkit.grid import load_personas
from evalkit.runner import RunOptions, arun_grid

from .loopback import serve_app
from .runner_fixtures import emulator_fixture
from .runner_support import PERSONAS_DIR, build_assistant, make_grid

# 4 emulated seconds x 0.02 = 80 ms per turn before the config scales it, with the jitter
emu = emulator_fixture(time_scale=0.02, seed=23, turn_delay=4.0)
DELAY_S = 0.3
#: few streams at once: the runner, both proxies and the emulator share one process (and its
#: GIL), and a starved reader receives events in bunches, which shortens the gaps it measures
KNOBS: dict[str, Any] = {"progress": False, "concurrency": 3}


class AgentDelayProxy:
    """An ASGI app forwarding every request to ``upstream``; in a simulate stream each agent
    ``turn`` event (and so everything after it) is held back ``delay`` seconds more: the
    stream a slower agent would give."""

    def __init__(self, upstream: str, delay: float) -> None:
        self.upstream = upstream
        self.delay = delay

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        url = self.upstream + scope["path"]
        skip = {b"host", b"content-length", b"accept-encoding", b"connection"}
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in skip]
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as http:
            request = http.build_request(scope["method"], url, content=body, headers=headers)
            response = await http.send(request, stream=True)
            try:
                drop = {b"content-length", b"transfer-encoding", b"connection"}
                await send(
                    {
                        "type": "http.response.start",
                        "status": response.status_code,
                        "headers": [
                            (k, v) for k, v in response.headers.raw if k.lower() not in drop
                        ],
                    }
                )
                await self._relay(response, send)
            finally:
                await response.aclose()

    async def _relay(self, response: httpx.Response, send: Any) -> None:
        """Read events as they come (stamping arrival) while a writer sends each one at its
        arrival plus the delay added so far, so a held agent turn pushes what follows."""
        queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

        async def reader() -> None:
            buffer = b""
            async for chunk in response.aiter_raw():
                buffer += chunk
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    queue.put_nowait((time.monotonic(), block + b"\n\n"))
            if buffer:
                queue.put_nowait((time.monotonic(), buffer))
            queue.put_nowait(None)

        task = asyncio.create_task(reader())
        added = 0.0
        try:
            while (item := await queue.get()) is not None:
                arrived, block = item
                if self._is_agent_turn(block):
                    added += self.delay
                wait = arrived + added - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await send({"type": "http.response.body", "body": block, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            task.cancel()

    @staticmethod
    def _is_agent_turn(block: bytes) -> bool:
        lines = block.decode("utf-8", "replace").splitlines()
        if "event: turn" not in lines:
            return False
        data = next((line[5:].strip() for line in lines if line.startswith("data:")), "{}")
        return bool(json.loads(data).get("role") == "agent")


async def _both_sides(emu: EmulatorServer, assistant: str, store: Path) -> tuple[Any, Any]:
    """The same grid through a proxy that adds nothing and through one that holds agent
    turns back, run at the same time (interleaved, as draft_vs_prod runs its sides)."""
    grid = make_grid(load_personas(PERSONAS_DIR), n=5, repeats=2)
    upstream = emu.base_url.removesuffix("/v1")
    with (
        serve_app(AgentDelayProxy(upstream, 0.0)) as plain,
        serve_app(AgentDelayProxy(upstream, DELAY_S)) as held,
    ):
        async with (
            AsyncClient(plain + "/v1", emu.api_key) as a,
            AsyncClient(held + "/v1", emu.api_key) as b,
        ):
            return await asyncio.gather(
                arun_grid(
                    grid,
                    assistant,
                    client=a,
                    store=store,
                    run_id="plain",
                    options=RunOptions(**KNOBS),
                ),
                arun_grid(
                    grid,
                    assistant,
                    client=b,
                    store=store,
                    run_id="held",
                    options=RunOptions(**KNOBS),
                ),
            )


def test_a_proxy_that_holds_agent_turns_is_found_with_the_delay_covered(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    baseline, candidate = asyncio.run(_both_sides(emu, build_assistant(emu), tmp_path))
    assert set(baseline.conversations["status"]) == {"done"}
    assert set(candidate.conversations["status"]) == {"done"}
    result = compare_latency(baseline, candidate, options=LatencyOptions(min_effect_s=0.1))
    assert result.interleaved is True
    assert result.verdict == Verdict.REGRESSED
    p50 = result.summary.set_index("quantile").loc["p50"]
    assert p50["verdict"] == "regressed"
    assert p50["difference_low"] <= DELAY_S <= p50["difference_high"], result.summary
    # caller turns are not timed, and the first turn is compared apart
    assert result.first_turn is not None


@pytest.mark.parametrize("effort", ["high"])
def test_an_assistant_that_reasons_harder_is_found_slower(
    emu: EmulatorServer, tmp_path: Path, effort: str
) -> None:
    from evalkit.api import Client
    from evalkit.runner import run_grid

    client = Client(emu.base_url, emu.api_key)
    plain = build_assistant(emu)
    config = next(a for a in client.list_assistants() if a.id == plain).config.to_json()
    config["llm"]["default"]["reasoningEffort"] = effort
    slow = client.create_assistant("Thinks harder", config).id
    grid = make_grid(load_personas(PERSONAS_DIR), n=4, repeats=2)
    runs = [
        run_grid(
            grid,
            aid,
            client=client,
            store=tmp_path,
            run_id=name,
            options=RunOptions(progress=False),
        )
        for name, aid in (("plain", plain), ("slow", slow))
    ]
    result = compare_latency(*runs, options=LatencyOptions(min_effect_s=0.02))
    assert result.verdict == Verdict.REGRESSED
    base, cand = result.summary.iloc[0][["baseline", "candidate"]]
    assert cand / base == pytest.approx(2.2, rel=0.35)  # the table's factor for "high"
