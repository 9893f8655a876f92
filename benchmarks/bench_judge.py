"""Judge throughput: N judge calls at concurrency C against a loopback endpoint with fixed latency.

A tiny OpenAI-compatible chat-completions server runs in a child process (this script with
``--serve``); it sleeps ``--latency`` seconds per call, then answers valid verdicts for the rules
in evalkit's judge prompt. This process makes the same N calls (default 5,000 at concurrency 64,
two rules per call), in rotating order:

* ``bare``: one ``httpx.AsyncClient`` of C connections + an ``asyncio.Semaphore``, posting a
  prebuilt body and decoding the JSON answer: the obvious bare httpx loop (a baseline measured
  in the same run). httpcore's pool scans all its connections for every connection on every
  request, so this loop is CPU-bound at about 10 ms per call at C=64;
* ``bare/slots``: the same with C clients of one connection each, handed out from a queue (what
  the judge does): the least any httpx client can do;
* ``judge``: ``Judge.ajudge`` (prompt building, response_format schema, validation, verdicts);
* ``judge+cache``: the same with a fresh ``cache_dir`` (an entry written per verdict).

The ideal wall time is ``N / C x latency``. Printed per variant (best of ``--rounds``): wall
time, ``wall / ideal`` (target <= 1.15x), wall against both baselines, this process's CPU per
call (all threads) and the server process's CPU seconds. Usage::

    python benchmarks/bench_judge.py                        # 5000 calls, concurrency 64, 0.2 s
    python benchmarks/bench_judge.py --calls 1000 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _harness import raise_fd_limit

from evalkit.grading._judge import Judge
from evalkit.grading._judge_config import JudgeOptions
from evalkit.grading._judge_prompt import build_messages
from evalkit.grading._judge_types import JudgedRule, JudgeTask

MODEL = "bench-judge"
HEADERS = {"Content-Type": "application/json"}
_FENCE = re.compile(r"```json\n(.*)\n```\s*$", re.DOTALL)


# ---------------------------------------------------------------------- the server (child process)


def serve(latency: float) -> None:
    """Serve the fake endpoint on a free loopback port; print ``PORT=<n>`` once listening."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from evalkit.emulator._server import bind_socket

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        match = _FENCE.search(body["messages"][-1]["content"])
        rules = json.loads(match.group(1))["rules"] if match else []
        await asyncio.sleep(latency)
        verdicts = [
            {"rule_id": r["rule_id"], "verdict": "pass", "reason": "ok", "evidence_turn": 1}
            for r in rules
        ]
        return JSONResponse(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": json.dumps({"verdicts": verdicts}),
                        }
                    }
                ],
                "usage": {"prompt_tokens": 300, "completion_tokens": 40},
            }
        )

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    sock = bind_socket("127.0.0.1", 0)
    config = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="off", backlog=2048, timeout_keep_alive=120
    )
    server = uvicorn.Server(config)

    # the socket already listens: a client that connects now waits in the backlog
    print(f"PORT={sock.getsockname()[1]}", flush=True)
    server.run(sockets=[sock])


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"the benchmark server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{line.split('=', 1)[1]}/v1"


# ---------------------------------------------------------------------- the clients


def make_tasks(n: int) -> list[JudgeTask]:
    turns = tuple(
        (i + 1, "agent" if i % 2 == 0 else "caller", f"Turn {i + 1} of the call, some words.")
        for i in range(8)
    )
    rules = (
        JudgedRule("confirms", "Asks to confirm", "The agent asks for a yes or no.", "h1"),
        JudgedRule("polite", "Closes politely", None, "h2"),
    )
    return [JudgeTask(f"conv-{i}", f"th-{i}", turns, rules) for i in range(n)]


def _body(tasks: list[JudgeTask]) -> bytes:
    messages = build_messages(tasks[0], tasks[0].rules)
    return json.dumps({"model": MODEL, "messages": messages, "temperature": 0}).encode()


async def bare(base_url: str, tasks: list[JudgeTask], concurrency: int) -> None:
    """One ``httpx.AsyncClient`` of ``concurrency`` connections and a semaphore."""
    body, url = _body(tasks), f"{base_url}/chat/completions"
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:

        async def one() -> None:
            async with sem:
                response = await http.post(url, content=body, headers=HEADERS)
                json.loads(response.json()["choices"][0]["message"]["content"])

        await asyncio.gather(*(one() for _ in tasks))


async def bare_slots(base_url: str, tasks: list[JudgeTask], concurrency: int) -> None:
    """``concurrency`` clients of one connection each, handed out from a queue (as the judge)."""
    body, url = _body(tasks), f"{base_url}/chat/completions"
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    ssl_context = httpx.create_ssl_context()  # one for all clients: each costs ~50 ms to build
    async with contextlib.AsyncExitStack() as stack:
        free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for _ in range(concurrency):
            client = httpx.AsyncClient(verify=ssl_context, limits=limits, timeout=60)
            free.put_nowait(await stack.enter_async_context(client))

        async def one() -> None:
            http = await free.get()
            try:
                response = await http.post(url, content=body, headers=HEADERS)
                json.loads(response.json()["choices"][0]["message"]["content"])
            finally:
                free.put_nowait(http)

        await asyncio.gather(*(one() for _ in tasks))


async def judged(
    base_url: str, tasks: list[JudgeTask], concurrency: int, cache: str | None
) -> None:
    options = JudgeOptions(concurrency=concurrency)
    judge = Judge(MODEL, base_url, options=options, cache_dir=cache)
    verdicts = await judge.ajudge(tasks)
    errors = sum(v.verdict == "error" for v in verdicts)
    if errors or judge.stats.calls != len(tasks):
        raise SystemExit(f"{errors} error verdicts, {judge.stats.calls} calls")


@dataclass
class Figure:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_variant(
    name: str, base_url: str, tasks: list[JudgeTask], concurrency: int
) -> tuple[float, float]:
    """Wall and CPU seconds of one variant (the cache folder is made and removed untimed)."""
    with tempfile.TemporaryDirectory() as tmp:
        work: dict[str, Any] = {
            "bare": lambda: bare(base_url, tasks, concurrency),
            "bare/slots": lambda: bare_slots(base_url, tasks, concurrency),
            "judge": lambda: judged(base_url, tasks, concurrency, cache=None),
            "judge+cache": lambda: judged(base_url, tasks, concurrency, cache=tmp),
        }
        cpu0, wall0 = time.process_time(), time.perf_counter()
        asyncio.run(work[name]())
        return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return
    raise_fd_limit()
    proc, base_url = start_server(args.latency)
    names = ["bare", "bare/slots", "judge", "judge+cache"]
    figures = {name: Figure() for name in names}
    try:
        tasks = make_tasks(args.calls)
        asyncio.run(bare_slots(base_url, tasks[: args.concurrency], args.concurrency))  # warm-up
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                server0 = process_cpu(proc.pid)
                wall, cpu = run_variant(name, base_url, tasks, args.concurrency)
                figures[name].wall.append(wall)
                figures[name].cpu.append(cpu)
                figures[name].server_cpu.append(process_cpu(proc.pid) - server0)
                print(f"  round {r + 1} {name:<12} {wall:6.2f} s", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    report(args, figures)


def report(args: argparse.Namespace, figures: dict[str, Figure]) -> None:
    ideal = args.calls / args.concurrency * args.latency
    print(
        f"\n{args.calls} judge calls, concurrency {args.concurrency}, latency "
        f"{args.latency * 1000:.0f} ms; ideal {ideal:.2f} s (calls / concurrency x latency); "
        f"best of {args.rounds} round(s)"
    )
    best = {name: min(f.wall) for name, f in figures.items()}
    print(
        f"{'variant':<12} {'wall s':>7} {'/ideal':>7} {'/bare':>7} {'/slots':>7} "
        f"{'cpu ms/call':>12} {'server cpu s':>13}"
    )
    for name, f in figures.items():
        print(
            f"{name:<12} {best[name]:7.2f} {best[name] / ideal:6.3f}x "
            f"{best[name] / best['bare']:6.3f}x {best[name] / best['bare/slots']:6.3f}x "
            f"{min(f.cpu) / args.calls * 1000:12.3f} {min(f.server_cpu):13.2f}"
        )


if __name__ == "__main__":
    main()
