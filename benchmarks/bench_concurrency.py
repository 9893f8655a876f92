"""1000 concurrent conversations from one process: wall time against the ideal.

The emulator runs in its own process with a per-turn latency (``--turn-delay``), so each
conversation lasts a few seconds whatever the load. This process runs N conversations at once:

* ``runner``: ``arun_grid(concurrency=N)`` over a grid of N conversations (store included);
* ``evalkit``: the same N conversations with ``AsyncClient.simulate(...).collect()`` alone
  (the client without the runner and its store);
* ``bare``: the same N requests with a bare ``httpx`` + ``httpx-sse`` loop (a baseline measured
  in the same run: what the emulator and the loopback allow without evalkit).

The ideal is the longest conversation's emulated latency alone: its turn count x turn delay.
A fourth row, ``faults``, is the runner again with the emulator dropping ``--drop-rate`` of the
streams mid-conversation (``PUT /_emulator/faults``); each dropped conversation is run again.
Its target is 1.25x of the clean runner row's wall time plus the re-runs' own turn time (the
longest re-run's turns x turn delay).
Printed: wall time, ideal, wall / ideal (target <= 1.1x for the runner), the streams' own span
(first start to last finish, without run setup and parquet writing), the time to the first turn
(p50, p99: where a connection storm shows), CPU seconds of this process and of the emulator's,
the peak of concurrently active simulations on the emulator, and the statuses. File-descriptor limits are raised to the
hard limit in both processes. Usage::

    python benchmarks/bench_concurrency.py                       # 1000 conversations, 0.3 s/turn
    python benchmarks/bench_concurrency.py --conversations 500 --turn-delay 0.25
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _harness import build_assistant, make_grid, raise_fd_limit, start_emulator
from httpx_sse import aconnect_sse

from evalkit import AsyncClient
from evalkit.grid import Grid
from evalkit.runner import RunOptions, arun_grid


@dataclass
class Outcome:
    wall: float
    span: float
    max_turns: int
    statuses: dict[str, int]
    peak_active: int
    first_turn: list[float]
    client_cpu: float = 0.0
    emulator_cpu: float = 0.0
    rerun_turns: int = 0  # the most turns of a conversation that was run again (0: none)
    reruns: int = 0

    def first_turn_quantile(self, q: float) -> float:
        ordered = sorted(self.first_turn)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def watch_active(base: str, key: str, stop: asyncio.Event) -> int:
    peak = 0
    admin = base.rsplit("/v1", 1)[0] + "/_emulator"
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=60.0) as http:
        while not stop.is_set():
            with contextlib.suppress(httpx.HTTPError):  # a swamped emulator: skip the sample
                peak = max(peak, (await http.get(f"{admin}/stats")).json()["active"])
            await asyncio.sleep(0.1)
    return peak


async def with_watcher(base: str, key: str, work: Any) -> tuple[Any, int]:
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_active(base, key, stop))
    try:
        result = await work
    finally:
        stop.set()
    return result, await watcher


async def set_faults(base: str, key: str, body: dict[str, Any]) -> None:
    """The emulator's fault mix for this project (``{}``: none)."""
    admin = base.rsplit("/v1", 1)[0] + "/_emulator"
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http:
        (await http.put(f"{admin}/faults", json=body)).raise_for_status()


async def run_runner(
    base: str, key: str, assistant: str, grid: Grid, store: Path, drop_rate: float = 0.0
) -> Outcome:
    if drop_rate:
        await set_faults(base, key, {"dropRate": drop_rate, "seed": 1})
        try:
            return await run_runner(base, key, assistant, grid, store)
        finally:
            await set_faults(base, key, {})
    n = len(grid)
    limits = httpx.Limits(max_connections=n + 16, max_keepalive_connections=n + 16)
    async with AsyncClient(base, key, limits=limits) as client:
        start = time.perf_counter()
        run, peak = await with_watcher(
            base,
            key,
            arun_grid(
                grid,
                assistant,
                client=client,
                target="draft",
                store=store,
                run_id=None,
                options=RunOptions(concurrency=n, progress=False),
            ),
        )
        wall = time.perf_counter() - start
    conv = run.conversations
    span = (conv["finished_at"].max() - conv["started_at"].min()).total_seconds()
    statuses = {str(k): int(v) for k, v in conv["status"].value_counts().items()}
    first = conv["first_turn_s"].dropna().tolist()
    rerun = conv[conv["attempts"] > 1]
    out = Outcome(wall, span, int(conv["n_turns"].max()), statuses, peak, first)
    out.reruns = len(rerun)
    out.rerun_turns = int(rerun["n_turns"].max()) if len(rerun) else 0
    return out


async def run_evalkit(base: str, key: str, assistant: str, grid: Grid) -> Outcome:
    n = len(grid)
    limits = httpx.Limits(max_connections=n + 16, max_keepalive_connections=n + 16)
    bodies = [slot.cell.simulate_kwargs() for slot in grid.conversations()]
    async with AsyncClient(base, key, limits=limits) as client:

        async def one(body: Any) -> tuple[str, int, float, float, float | None]:
            t0 = time.perf_counter()
            transcript = await client.simulate(assistant, **body).collect()
            status = "done" if transcript.ok else "error"
            return status, len(transcript.turns), t0, time.perf_counter(), transcript.first_turn_s

        start = time.perf_counter()
        results, peak = await with_watcher(
            base, key, asyncio.gather(*(one(b) for b in bodies), return_exceptions=True)
        )
        wall = time.perf_counter() - start
    return summarize(results, wall, peak)


def summarize(results: list[Any], wall: float, peak: int) -> Outcome:
    ok = [r for r in results if isinstance(r, tuple)]
    statuses: dict[str, int] = {}
    for r in results:
        name = r[0] if isinstance(r, tuple) else type(r).__name__
        statuses[name] = statuses.get(name, 0) + 1
    span = max(r[3] for r in ok) - min(r[2] for r in ok) if ok else float("nan")
    first = [r[4] for r in ok if r[4] is not None and r[4] == r[4]]
    return Outcome(wall, span, max((r[1] for r in ok), default=0), statuses, peak, first)


async def run_bare(base: str, key: str, assistant: str, grid: Grid) -> Outcome:
    url = f"{base}/realtime-assistants/builds/{assistant}/simulate"
    headers = {"Authorization": f"Bearer {key}"}
    n = len(grid)
    limits = httpx.Limits(max_connections=n + 16, max_keepalive_connections=n + 16)
    timeout = httpx.Timeout(60.0, pool=None)
    bodies = [slot.cell.simulate_kwargs() for slot in grid.conversations()]
    async with httpx.AsyncClient(timeout=timeout, limits=limits) as http:

        async def one(body: Any) -> tuple[str, int, float, float, float]:
            t0 = time.perf_counter()
            turns, status, first = 0, "dropped", float("nan")
            async with aconnect_sse(http, "POST", url, json=body, headers=headers) as source:
                source.response.raise_for_status()
                async for sse in source.aiter_sse():
                    json.loads(sse.data)
                    if sse.event == "turn":
                        if not turns:
                            first = time.perf_counter() - t0
                        turns += 1
                    elif sse.event in ("done", "error"):
                        status = sse.event
                        break
            return status, turns, t0, time.perf_counter(), first

        start = time.perf_counter()
        results, peak = await with_watcher(
            base, key, asyncio.gather(*(one(b) for b in bodies), return_exceptions=True)
        )
        wall = time.perf_counter() - start
    return summarize(results, wall, peak)


def report(name: str, out: Outcome, turn_delay: float) -> float:
    ideal = out.max_turns * turn_delay
    ratio = out.wall / ideal
    print(
        f"{name:>7}: wall {out.wall:5.2f} s, ideal {ideal:5.2f} s ({out.max_turns} turns x "
        f"{turn_delay} s): wall/ideal {ratio:4.2f}x (streams' span {out.span / ideal:4.2f}x); "
        f"first turn p50 {out.first_turn_quantile(0.5):4.2f} s p99 "
        f"{out.first_turn_quantile(0.99):4.2f} s; CPU client {out.client_cpu:4.1f} s, emulator "
        f"{out.emulator_cpu:4.1f} s; peak active {out.peak_active}; {out.statuses}"
        + (f"; {out.reruns} run again (up to {out.rerun_turns} turns)" if out.reruns else "")
    )
    return ratio


def report_faults(clean: list[Outcome], faulted: list[Outcome], args: argparse.Namespace) -> None:
    """The fault row against its target: 1.25 x (the clean grid's wall + the re-runs' turn time)."""
    base_wall = min(o.wall for o in clean)
    best = min(faulted, key=lambda o: o.wall)
    rerun_time = best.rerun_turns * args.turn_delay
    target = 1.25 * (base_wall + rerun_time)
    print(
        f"dropRate {args.drop_rate}: runner wall {best.wall:.2f} s (best of {len(faulted)}) vs "
        f"{base_wall:.2f} s without faults + {rerun_time:.2f} s of re-run turns "
        f"({best.reruns} re-run); ratio {best.wall / (base_wall + rerun_time):.2f}x "
        f"(target <= 1.25x, i.e. <= {target:.2f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turn-delay", type=float, default=0.3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--drop-rate", type=float, default=0.1, help="dropped streams in the fault row (0: no row)"
    )
    parser.add_argument("--methods", default="bare,evalkit,runner,faults", help="rows to run")
    args = parser.parse_args()
    hard = raise_fd_limit()
    print(
        f"{args.conversations} concurrent conversations, turn delay {args.turn_delay} s, "
        f"RLIMIT_NOFILE {hard}"
    )

    grid = make_grid(args.conversations)
    # exact waits (no jitter), so the ideal is the turn count x turn delay
    proc, base, key = start_emulator("--turn-delay", str(args.turn_delay), "--turn-jitter", "0")
    store = Path(tempfile.mkdtemp(prefix="evalkit-bench-concurrency-"))
    try:
        assistant = build_assistant(base, key, [{"name": "A", "date": "Monday"}])
        runs = {
            "bare": lambda: run_bare(base, key, assistant, grid),
            "evalkit": lambda: run_evalkit(base, key, assistant, grid),
            "runner": lambda: run_runner(base, key, assistant, grid, store),
            "faults": lambda: run_runner(base, key, assistant, grid, store, args.drop_rate),
        }
        names = [
            m for m in args.methods.split(",") if m in runs and (m != "faults" or args.drop_rate)
        ]
        ratios: dict[str, list[float]] = {name: [] for name in names}
        outcomes: dict[str, list[Outcome]] = {name: [] for name in names}
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                cpu0, emu0 = time.process_time(), process_cpu(proc.pid)
                out = asyncio.run(runs[name]())
                out.client_cpu = time.process_time() - cpu0
                out.emulator_cpu = process_cpu(proc.pid) - emu0
                outcomes[name].append(out)
                ratios[name].append(report(name, out, args.turn_delay))
        print()
        for name, values in ratios.items():
            print(f"{name:>7}: best wall/ideal {min(values):.2f}x over {len(values)} round(s)")
        print("  (DESIGN target for the runner <= 1.1x of ideal)")
        best = {name: min(values) for name, values in ratios.items()}
        if "bare" in best and "runner" in best and "evalkit" in best:
            print(
                f"runner / bare httpx (same run, best rounds): {best['runner'] / best['bare']:.2f}x;"
                f" evalkit client / bare: {best['evalkit'] / best['bare']:.2f}x"
            )
        if "faults" in outcomes and "runner" in outcomes:
            report_faults(outcomes["runner"], outcomes["faults"], args)
    finally:
        proc.terminate()
        proc.wait(20)


if __name__ == "__main__":
    main()
