"""How many concurrent simulate streams one emulator process holds, and its events per second.

The emulator runs in its own process (the `evalkit emulator` command function); the load comes
from this process over raw asyncio sockets (a minimal HTTP/1.1 client, so the client is not the
bottleneck). Figures are printed as ratios against a baseline measured in the same run:

* hold: N streams opened at once, each a whole conversation with a per-turn latency; reports
  the peak of concurrently active streams (from /_emulator/stats), how many ended with `done`,
  and wall time against the ideal (the slowest conversation's turns × turn latency);
* throughput: events per second with no turn latency, N streams in flight at a time.

Run: python benchmarks/bench_emulator.py [--levels 100,500,1000] [--turn-delay 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from _harness import start_emulator

CONFIG = {
    "agent": {"instructions": "You remind {{name}} of an appointment.", "initialGreeting": True},
    "llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}},
}


@dataclass
class Result:
    ok: bool
    turns: int
    seconds: float


async def one_stream(host: str, port: int, path: str, key: str, body: bytes) -> Result:
    """POST a simulate request and read the stream to its end over a raw socket."""
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    text = data.decode("utf-8", "replace")
    return Result(
        ok=text.startswith("HTTP/1.1 200") and "event: done" in text,
        turns=text.count("event: turn"),
        seconds=time.perf_counter() - start,
    )


async def peak_active(admin: str, key: str, stop: asyncio.Event) -> int:
    peak = 0
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as c:
        while not stop.is_set():
            stats = (await c.get(f"{admin}/stats")).json()
            peak = max(peak, stats["active"])
            await asyncio.sleep(0.05)
    return peak


async def hold(base: str, key: str, assistant: str, n: int) -> tuple[list[Result], int, float]:
    url = urlsplit(base)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    admin = base.rsplit("/v1", 1)[0] + "/_emulator"
    path = f"{url.path}/realtime-assistants/builds/{assistant}/simulate"
    stop = asyncio.Event()
    watcher = asyncio.create_task(peak_active(admin, key, stop))
    start = time.perf_counter()
    bodies = [
        json.dumps({"persona": {"label": f"p{i % 7}"}, "variables": {"name": f"N{i}"}})
        for i in range(n)
    ]
    results = await asyncio.gather(*(one_stream(host, port, path, key, b.encode()) for b in bodies))
    wall = time.perf_counter() - start
    stop.set()
    return list(results), await watcher, wall


async def throughput(
    base: str, key: str, assistant: str, inflight: int, seconds: float
) -> tuple[int, int, float]:
    url = urlsplit(base)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    path = f"{url.path}/realtime-assistants/builds/{assistant}/simulate"
    deadline = time.perf_counter() + seconds
    events = conversations = 0

    async def worker(w: int) -> None:
        nonlocal events, conversations
        i = 0
        while time.perf_counter() < deadline:
            body = json.dumps({"persona": {"label": f"w{w}"}, "variables": {"i": i}}).encode()
            result = await one_stream(host, port, path, key, body)
            events += result.turns + 1
            conversations += 1
            i += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(inflight)))
    return events, conversations, time.perf_counter() - start


def create_assistant(base: str, key: str) -> str:
    response = httpx.post(
        f"{base}/realtime-assistants",
        json={"name": "bench", "config": CONFIG},
        headers={"Authorization": f"Bearer {key}"},
    )
    response.raise_for_status()
    return str(response.json()["realtimeAssistantId"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="100,500,1000")
    parser.add_argument("--turn-delay", type=float, default=0.1)
    parser.add_argument("--throughput-seconds", type=float, default=8.0)
    parser.add_argument("--inflight", type=int, default=100)
    args = parser.parse_args()

    proc, base, key = start_emulator("--turn-delay", str(args.turn_delay))
    try:
        assistant = create_assistant(base, key)
        baseline, _, _ = asyncio.run(hold(base, key, assistant, 1))
        one = baseline[0]
        print(
            f"baseline: 1 stream, {one.turns} turns in {one.seconds:.2f} s "
            f"(turn delay {args.turn_delay} s)"
        )
        print(
            f"{'streams':>8} {'done':>6} {'peak active':>12} {'wall s':>8} {'ideal s':>8} "
            f"{'wall/ideal':>10} {'events/s':>9}"
        )
        for n in (int(x) for x in args.levels.split(",")):
            results, peak, wall = asyncio.run(hold(base, key, assistant, n))
            ideal = max(r.turns for r in results) * args.turn_delay
            events = sum(r.turns + 1 for r in results)
            done = sum(r.ok for r in results)
            print(
                f"{n:>8} {done:>6} {peak:>12} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>10.2f} "
                f"{events / wall:>9.0f}"
            )
    finally:
        proc.terminate()
        proc.wait(20)

    proc, base, key = start_emulator("--turn-delay", "0.0")
    try:
        assistant = create_assistant(base, key)
        events, conversations, wall = asyncio.run(
            throughput(base, key, assistant, args.inflight, args.throughput_seconds)
        )
        print(
            f"throughput (no turn delay, {args.inflight} in flight): {events / wall:.0f} events/s, "
            f"{conversations / wall:.0f} conversations/s over {wall:.1f} s"
        )
    finally:
        proc.terminate()
        proc.wait(20)


if __name__ == "__main__":
    main()
