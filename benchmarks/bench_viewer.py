"""The viewer under concurrency: rounds of 200 concurrent requests over a store of 236 runs,
against a bare Starlette app serving the same pages pre-rendered (the baseline), in one run.

The store: the demo's two graded runs (prod and draft, 18 conversations each, made offline on
the embedded emulator), copied to 236 runs (half of each; a manifest rewritten per copy with its
own run id and start time). Each server runs in its own child process (uvicorn on a socket
bound by ``evalkit.view._server.bind``, the viewer's own settings), so its CPU and memory are
its own: the viewer (``serve_forever``), then the bare app, which first renders every page of
the mix with the viewer's own :class:`Pages` and then only looks them up.

A round fires ``--concurrency`` requests at once (``httpx.AsyncClient`` on loopback, one
connection each), drawn with a fixed seed from a mix of pages: the index, runs, transcripts,
comparisons and the assistant's history. A request counts as an error when it raises (a cut
connection is ``httpx.ReadError``), answers other than 200, or its body is shorter than its
``Content-Length``. Printed per server and round: p50, p95 and max latency, errors, and the
server's resident memory (``VmRSS``) after the round; then the viewer against the baseline as
ratios. Usage::

    python benchmarks/bench_viewer.py                    # ~1-2 min
    python benchmarks/bench_viewer.py --runs 236 --concurrency 200 --rounds 3 --pages 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from _harness import raise_fd_limit

from evalkit.demo import offline_runs
from evalkit.store import load_run
from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest

_VIEWER = (
    "import sys; from evalkit.view import ViewerOptions, serve_forever; "
    "serve_forever(ViewerOptions(store=sys.argv[1], port=0), "
    "announce=lambda url: print(url, flush=True))"
)
_BARE = """
import json, sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route
from evalkit.view._pages import Pages
from evalkit.view._site import Site
from evalkit.view._app import _routes
from evalkit.view._server import bind

store, paths = sys.argv[1], json.loads(sys.argv[2])
# the same pages, rendered once by the viewer's own code (through its routes' functions)
from evalkit.view import build_app, ViewerOptions
from starlette.testclient import TestClient
with TestClient(build_app(ViewerOptions(store=store, port=0))) as client:
    pages = {p: client.get("/" + p).content for p in paths}
missing = [p for p, body in pages.items() if not body]
assert not missing, missing

async def page(request):
    body = pages.get(request.path_params["path"])
    if body is None:
        return Response("not found", status_code=404)
    return HTMLResponse(body)

app = Starlette(routes=[Route("/{path:path}", page)])
sock = bind("127.0.0.1", 0)
print(f"http://127.0.0.1:{sock.getsockname()[1]}/index.html", flush=True)
uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                              loop="asyncio")).run(sockets=[sock])
"""


def build_store(runs: int) -> Path:
    """A store of ``runs`` graded runs: the demo's prod and draft, copied (manifests rewritten
    with their own run id and an hourly start time)."""
    work = Path(tempfile.mkdtemp(prefix="evalkit-bench-viewer-"))
    demo = offline_runs(work / "demo", repeats=1, progress=False)
    store = work / "runs"
    store.mkdir()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(runs):
        source = "prod" if i % 2 == 0 else "draft"
        run_id = f"{source}-{i // 2:03d}"
        shutil.copytree(demo / source, store / run_id)
        manifest = read_manifest(store / run_id / MANIFEST_NAME)
        manifest["run_id"] = run_id
        manifest["created_at"] = (start + timedelta(hours=i)).isoformat()
        write_manifest(store / run_id / MANIFEST_NAME, manifest)
    return store


def page_mix(store: Path, n_pages: int, seed: int) -> list[str]:
    """``n_pages`` distinct pages: the index, the history, and runs, transcripts and
    comparisons of randomly chosen runs."""
    rng = random.Random(seed)
    run_ids = sorted(p.name for p in store.iterdir() if (p / MANIFEST_NAME).is_file())
    manifest = read_manifest(store / run_ids[0] / MANIFEST_NAME)
    conversations = [str(c) for c in load_run(run_ids[0], store).conversations["conversation_id"]]
    pages = ["index.html", f"history/{manifest['assistant_id']}.html"]
    while len(pages) < n_pages:
        kind = rng.random()
        run_id = rng.choice(run_ids)
        if kind < 0.35:
            page = f"runs/{run_id}/index.html"
        elif kind < 0.85:
            page = f"runs/{run_id}/c/{rng.choice(conversations)}.html"
        else:
            i = rng.randrange(len(run_ids) // 2)
            page = f"compare/prod-{i:03d}/draft-{i:03d}.html"
        if page not in pages:
            pages.append(page)
    return pages


def start(code: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url:
        raise SystemExit(f"the server did not start (exit {proc.wait()})")
    return proc, url.removesuffix("index.html")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Round:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss: float = 0.0

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def fire(base: str, paths: list[str], seconds: float) -> Round:
    """Every path at once (one connection each); latency and errors per request."""
    result = Round()
    limits = httpx.Limits(max_connections=len(paths), max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=seconds) as client:
        gate = asyncio.Event()

        async def one(path: str) -> None:
            await gate.wait()
            began = time.perf_counter()
            try:
                response = await client.get(base + path)
                expected = int(response.headers.get("content-length", len(response.content)))
                if response.status_code != 200:
                    result.errors.append(f"{path}: {response.status_code}")
                elif len(response.content) < expected:
                    result.errors.append(f"{path}: {len(response.content)} of {expected} bytes")
            except httpx.HTTPError as exc:
                result.errors.append(f"{path}: {type(exc).__name__}")
                return
            result.latencies.append(time.perf_counter() - began)

        tasks = [asyncio.create_task(one(p)) for p in paths]
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*tasks)
    return result


def bench(
    name: str, proc: subprocess.Popen[str], base: str, rounds: list[list[str]], timeout: float
) -> list[Round]:
    before = rss_mb(proc.pid)
    print(f"\n{name} (RSS {before:.0f} MB at start):")
    print(f"  {'round':>5} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'errors':>6} {'RSS MB':>7}")
    out = []
    for i, paths in enumerate(rounds, 1):
        result = asyncio.run(fire(base, paths, timeout))
        result.rss = rss_mb(proc.pid)
        out.append(result)
        print(
            f"  {i:>5} {result.quantile(0.5):>7.3f} {result.quantile(0.95):>7.3f} "
            f"{max(result.latencies, default=float('nan')):>7.3f} {len(result.errors):>6} "
            f"{result.rss:>7.0f}"
        )
        for error in result.errors[:5]:
            print(f"        {error}")
    print(f"  RSS growth over the rounds: {out[-1].rss - before:+.0f} MB")
    for r in out:
        r.latencies.sort()
    out.insert(0, Round(rss=before))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=236, help="runs in the store")
    parser.add_argument("--concurrency", type=int, default=200, help="requests fired at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=60, help="distinct pages in the mix")
    parser.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    raise_fd_limit()
    began = time.perf_counter()
    store = build_store(args.runs)
    pages = page_mix(store, args.pages, args.seed)
    rng = random.Random(args.seed)
    rounds = [[rng.choice(pages) for _ in range(args.concurrency)] for _ in range(args.rounds)]
    print(
        f"store of {args.runs} runs built in {time.perf_counter() - began:.1f} s; "
        f"{args.rounds} rounds of {args.concurrency} concurrent requests over {len(pages)} pages"
    )
    results = {}
    for name, code, extra in (("viewer", _VIEWER, []), ("bare", _BARE, [json.dumps(pages)])):
        proc, base = start(code, str(store), *extra)
        try:
            results[name] = bench(name, proc, base, rounds, args.timeout)
        finally:
            proc.terminate()
            proc.wait(10)
    viewer, bare = results["viewer"], results["bare"]
    print("\nviewer / bare, per round (p50, p95):")
    for i in range(1, args.rounds + 1):
        print(
            f"  round {i}: p50 {viewer[i].quantile(0.5) / bare[i].quantile(0.5):.1f}x "
            f"({viewer[i].quantile(0.5):.3f} s / {bare[i].quantile(0.5):.3f} s), "
            f"p95 {viewer[i].quantile(0.95) / bare[i].quantile(0.95):.1f}x"
        )
    errors = {n: sum(len(r.errors) for r in rs) for n, rs in results.items()}
    growth = {n: rs[-1].rss - rs[0].rss for n, rs in results.items()}
    print(
        f"errors: viewer {errors['viewer']}, bare {errors['bare']} of "
        f"{args.rounds * args.concurrency} each; RSS growth: viewer {growth['viewer']:+.0f} MB, "
        f"bare {growth['bare']:+.0f} MB"
    )
    shutil.rmtree(store.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
