"""Client-side CPU per simulated conversation: evalkit against a bare httpx + httpx-sse loop.

The emulator runs in its own process (so its CPU is not counted); this process runs the same
conversations, at the same concurrency, three ways, in interleaved rounds (the order rotates
every round), and measures ``time.process_time()`` (user + system CPU of this process, all
threads) around each batch:

* ``bare``: ``httpx.AsyncClient`` + ``httpx_sse.aconnect_sse`` + ``json.loads`` of each event's
  data, stopping at the terminal event (the least a client can do);
* ``evalkit``: ``AsyncClient.simulate(...).collect()`` (typed events, retry policy, deadline,
  transcript);
* ``runner``: ``arun_grid`` over a grid of the same size (journal with fsync, parquet tables,
  manifest, snapshot), CPU per conversation including the store;
* ``untimed``: the same runner with turn timing switched off in this process only (the stream
  keeps no arrival times, so every ``at_s`` is null): ``runner / untimed`` is what recording
  ``at_s`` costs.

CPU is user + system time (``getrusage(RUSAGE_SELF)``, all threads); system time is printed apart, since that is where
the journal's fsyncs show. Targets: evalkit <= 1.25x bare (DESIGN.md), runner <= 1.25x bare. Usage::

    python benchmarks/bench_client_cpu.py                   # 5 rounds x 200 conversations
    python benchmarks/bench_client_cpu.py --rounds 7 --conversations 400 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
from _harness import build_assistant, make_grid, raise_fd_limit, start_emulator
from httpx_sse import aconnect_sse

from evalkit import AsyncClient
from evalkit.api import _streaming
from evalkit.grid import Grid
from evalkit.runner import RunOptions, arun_grid


class _UntimedState(_streaming._StreamState):
    """The stream's bookkeeping without arrival times (the ``untimed`` method only)."""

    __slots__ = ()

    def accept(self, sse: Any) -> Any:
        event = super().accept(sse)
        self.turn_at_s.clear()
        return event


async def run_untimed(*args: Any) -> int:
    timed = _streaming._StreamState
    _streaming._StreamState = _UntimedState  # type: ignore[misc]
    try:
        return await run_runner(*args)
    finally:
        _streaming._StreamState = timed  # type: ignore[misc]


async def bounded(items: list[Any], concurrency: int, one: Callable[[Any], Awaitable[int]]) -> int:
    semaphore = asyncio.Semaphore(concurrency)

    async def guarded(item: Any) -> int:
        async with semaphore:
            return await one(item)

    return sum(await asyncio.gather(*(guarded(i) for i in items)))


async def run_bare(base: str, key: str, assistant: str, bodies: list[Any], conc: int) -> int:
    """The baseline: events counted, each event's data parsed."""
    url = f"{base}/realtime-assistants/builds/{assistant}/simulate"
    headers = {"Authorization": f"Bearer {key}"}
    timeout = httpx.Timeout(60.0)
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as http:

        async def one(body: Any) -> int:
            events = 0
            async with aconnect_sse(http, "POST", url, json=body, headers=headers) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    json.loads(sse.data)
                    events += 1
                    if sse.event in ("done", "error"):
                        break
            return events

        return await bounded(bodies, conc, one)


async def run_evalkit(base: str, key: str, assistant: str, bodies: list[Any], conc: int) -> int:
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with AsyncClient(base, key, limits=limits) as client:

        async def one(body: Any) -> int:
            transcript = await client.simulate(assistant, **body).collect()
            return len(transcript.turns) + 1

        return await bounded(bodies, conc, one)


async def run_runner(
    base: str, key: str, assistant: str, grid: Grid, conc: int, store: Path, run_id: str
) -> int:
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with AsyncClient(base, key, limits=limits) as client:
        run = await arun_grid(
            grid,
            assistant,
            client=client,
            target="draft",
            store=store,
            run_id=run_id,
            options=RunOptions(concurrency=conc, progress=False),
        )
    # counted from the manifest: loading the tables into pandas is not the runner's work
    return int(run.manifest["n_turns"]) + int(run.manifest["counts"]["total"])


def measure(action: Callable[[], Coroutine[Any, Any, int]]) -> tuple[float, float, float, int]:
    """CPU seconds (user + system), system seconds, wall seconds and events of one batch.

    Each batch gets a fresh loop. System time is where the journal's fsyncs show.
    """
    gc.collect()
    usage0, wall0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    events = asyncio.run(action())
    usage1 = resource.getrusage(resource.RUSAGE_SELF)
    user, system = usage1.ru_utime - usage0.ru_utime, usage1.ru_stime - usage0.ru_stime
    return user + system, system, time.perf_counter() - wall0, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    raise_fd_limit()

    grid = make_grid(args.conversations)
    bodies = [slot.cell.simulate_kwargs() for slot in grid.conversations()]  # JSON-able
    records = [{"name": "Caller 0", "date": "Monday"}]
    proc, base, key = start_emulator()
    store = Path(tempfile.mkdtemp(prefix="evalkit-bench-cpu-"))
    try:
        assistant = build_assistant(base, key, records)
        n, c = args.conversations, args.concurrency
        methods: dict[str, Callable[[int], Callable[[], Coroutine[Any, Any, int]]]] = {
            "bare": lambda r: lambda: run_bare(base, key, assistant, bodies, c),
            "evalkit": lambda r: lambda: run_evalkit(base, key, assistant, bodies, c),
            "runner": lambda r: (
                lambda: run_runner(base, key, assistant, grid, c, store, f"round-{r}")
            ),
            "untimed": lambda r: (
                lambda: run_untimed(base, key, assistant, grid, c, store, f"untimed-{r}")
            ),
        }
        for name in methods:  # warm up both sides (lazy imports, emulator caches)
            measure(methods[name](-1))
        cpu: dict[str, list[float]] = {m: [] for m in methods}
        sys_cpu: dict[str, list[float]] = {m: [] for m in methods}
        per_event: dict[str, list[float]] = {m: [] for m in methods}
        print(f"{n} conversations per batch, concurrency {c}, {args.rounds} rounds")
        print(
            f"{'round':>5} {'method':>8} {'CPU ms/conv':>12} {'sys ms/conv':>12} {'us/event':>9} "
            f"{'wall s':>7}"
        )
        names = list(methods)
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                seconds, system, wall, events = measure(methods[name](r))
                cpu[name].append(seconds / n * 1000)
                sys_cpu[name].append(system / n * 1000)
                per_event[name].append(seconds / events * 1e6)
                print(
                    f"{r:>5} {name:>8} {cpu[name][-1]:>12.3f} {sys_cpu[name][-1]:>12.3f} "
                    f"{per_event[name][-1]:>9.1f} {wall:>7.2f}"
                )
        med = {m: statistics.median(v) for m, v in cpu.items()}
        med_sys = {m: statistics.median(v) for m, v in sys_cpu.items()}
        med_event = {m: statistics.median(v) for m, v in per_event.items()}
        print()
        print("median CPU per conversation (client process only, user + system):")
        for m in names:
            print(
                f"  {m:>8}: {med[m]:7.3f} ms/conversation (system {med_sys[m]:5.3f})  "
                f"{med_event[m]:6.1f} us/event"
            )
        ratio = med["evalkit"] / med["bare"]
        ratio_event = med_event["evalkit"] / med_event["bare"]
        print(f"evalkit / bare: {ratio:.2f}x per conversation, {ratio_event:.2f}x per event")
        print("  (target <= 1.25x)")
        print(
            f"runner / bare: {med['runner'] / med['bare']:.2f}x per conversation (store included; "
            "target <= 1.25x)"
        )
        user = {m: med[m] - med_sys[m] for m in names}
        print(f"runner / bare, user time only: {user['runner'] / user['bare']:.2f}x")
        print(
            f"runner (at_s recorded) / untimed runner: {med['runner'] / med['untimed']:.3f}x "
            f"per conversation; untimed / bare: {med['untimed'] / med['bare']:.2f}x"
        )
    finally:
        proc.terminate()
        proc.wait(20)


if __name__ == "__main__":
    main()
