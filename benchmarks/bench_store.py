"""Stores a team shares: a store in S3 against a local one, the catalog, SQL over a store.

moto's S3 server (``ThreadedMotoServer``) and the emulator each run in their own child process
on loopback, so neither's CPU is counted as this process's. Three parts, each against a
baseline measured in the same run:

* ``runner``: ``arun_grid`` CPU per conversation (user + system, ``getrusage``, all threads)
  with the store at ``s3://`` against the same grid into a local folder (the baseline), in
  interleaved rounds whose order alternates, after a warm-up of each. Target: s3 / local
  <= 1.5x.
* ``catalog``: :func:`evalkit.store.catalog` of 1,000 runs (manifests only), local and at
  ``s3://``, against the bare minimum of reading manifests (list the runs, fetch every manifest,
  ``json.loads``). At a URL the catalog reads the store's index (``.catalog/``: two listings and
  a snapshot); printed too: the store's first catalog (every copy fetched) and one after a run
  was graded. Target: < 2 s.
* ``sql``: :func:`evalkit.store.sql` over the grades of 100k conversations (100 runs x 1,000
  conversations x 12 rules = 1.2M grade rows), local and at ``s3://``, against bare DuckDB over
  the same parquet files read with pyarrow (no evalkit). Target: < 3 s.

The stores for ``catalog`` and ``sql`` are written directly (no conversations simulated): the
manifests with the store's ``write_manifest`` (a real run's manifest as the template, with a
grading note; at the URL for the catalog), the grades with ``write_grades``, into a local
folder, copied as they are to the bucket for ``sql``. Usage::

    python benchmarks/bench_store.py                     # ~1-2 min
    python benchmarks/bench_store.py --rounds 5 --conversations 300 --runs 1000 --sql-runs 100
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _harness import build_assistant, make_grid, raise_fd_limit, start_emulator

from evalkit import AsyncClient
from evalkit.grid import Grid
from evalkit.runner import RunOptions, arun_grid
from evalkit.store import (
    RemotePath,
    catalog,
    grades_frame,
    grades_path,
    open_store,
    read_stored_manifest,
    record_grades_summary,
    sql,
    write_grades,
)
from evalkit.store._manifest import write_manifest

_MOTO_CODE = (
    "import sys; from moto.moto_server.threaded_moto_server import ThreadedMotoServer; "
    "s = ThreadedMotoServer(ip_address='127.0.0.1', port=0, verbose=False); s.start(); "
    "h, p = s.get_host_and_port(); print(f'http://{h}:{p}', flush=True); sys.stdin.read()"
)
RULES = [f"rule-{i:02d}" for i in range(12)]
SQL_QUERY = (
    "select run_id, rule_id, count(*) as n, avg(points_awarded) as mean_points, "
    "avg(case when verdict = 'pass' then 1.0 else 0.0 end) as pass_rate "
    "from grades group by all order by all"
)


def start_moto() -> tuple[subprocess.Popen[str], str]:
    """moto's S3 server in a child process; its endpoint. The AWS environment points at it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _MOTO_CODE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # its request log
        text=True,
    )
    assert proc.stdout is not None
    endpoint = proc.stdout.readline().strip()
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench-key",
            "AWS_SECRET_ACCESS_KEY": "bench-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        }
    )
    return proc, endpoint


def new_bucket() -> str:
    import s3fs

    name = f"bench-{secrets.token_hex(4)}"
    s3fs.S3FileSystem(use_listings_cache=False).mkdir(name)
    return name


def cpu_of(action: Callable[[], Any]) -> tuple[float, float, Any]:
    """CPU seconds (user + system, all threads), wall seconds, and the result."""
    gc.collect()
    u0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    result = action()
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    return cpu, time.perf_counter() - w0, result


def wall_of(action: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall seconds over ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


# --------------------------------------------------------------------------- runner CPU
async def run_once(base: str, key: str, assistant: str, grid: Grid, store: str, run_id: str) -> int:
    async with AsyncClient(base, key) as client:
        run = await arun_grid(
            grid,
            assistant,
            client=client,
            target="draft",
            store=store,
            run_id=run_id,
            options=RunOptions(concurrency=16, progress=False),
        )
    return int(run.manifest["counts"]["total"])


def bench_runner(args: argparse.Namespace, bucket: str) -> tuple[dict[str, float], str]:
    """Median CPU ms per conversation per store kind; a local run's folder (a template)."""
    grid = make_grid(args.conversations)
    proc, base, key = start_emulator()
    local = tempfile.mkdtemp(prefix="evalkit-bench-store-")
    stores = {"local": local, "s3": f"s3://{bucket}/runner"}
    try:
        assistant = build_assistant(base, key, [{"name": "Caller 0", "date": "Monday"}])
        for store in stores.values():  # warm-up: imports, connection pools, emulator
            asyncio.run(run_once(base, key, assistant, grid, store, "warm-up"))
        per_conv: dict[str, list[float]] = {k: [] for k in stores}
        print(f"runner: {args.conversations} conversations per run, concurrency 16")
        print(f"{'round':>5} {'store':>6} {'CPU ms/conv':>12} {'wall s':>7}")
        for r in range(args.rounds):
            order = list(stores) if r % 2 == 0 else list(reversed(stores))
            for kind in order:
                cpu, wall, n = cpu_of(
                    lambda k=kind, rid=f"round-{r}": asyncio.run(
                        run_once(base, key, assistant, grid, stores[k], rid)
                    )
                )
                per_conv[kind].append(cpu / n * 1000)
                print(f"{r:>5} {kind:>6} {per_conv[kind][-1]:>12.3f} {wall:>7.2f}")
    finally:
        proc.terminate()
        proc.wait(20)
    return {k: statistics.median(v) for k, v in per_conv.items()}, str(Path(local) / "warm-up")


# --------------------------------------------------------------------------- synthetic stores
def template_manifest(run_folder: str) -> dict[str, Any]:
    manifest = read_stored_manifest(Path(run_folder))
    if manifest is None:
        raise SystemExit(f"no manifest in {run_folder}")
    return manifest


def write_manifests(root: Path | RemotePath, template: dict[str, Any], n: int, rubric: str) -> None:
    """``n`` finalized runs' manifests (one a night), each with a grading note, written with
    the store's ``write_manifest`` (at a URL: 8 at once; each also copied to ``.catalog/``)."""
    start = datetime(2026, 1, 1, 3, 17, tzinfo=UTC)
    rng = np.random.default_rng(1)
    jobs = []
    for i in range(n):
        run_id = f"night-{i:05d}"
        when = start + timedelta(days=i)
        manifest = {
            **template,
            "run_id": run_id,
            "created_at": when.isoformat(),
            "finalized_at": (when + timedelta(minutes=20)).isoformat(),
            "grades": {
                rubric: {
                    "conversations": 1000,
                    "mean_score": float(rng.normal(80, 3)),
                    "graded_at": (when + timedelta(minutes=30)).isoformat(),
                }
            },
        }
        (root / run_id).mkdir(parents=True, exist_ok=True)
        jobs.append((root / run_id / "manifest.json", manifest))
    with ThreadPoolExecutor(8 if isinstance(root, RemotePath) else 1) as pool:
        list(pool.map(lambda job: write_manifest(*job), jobs))


def write_grade_files(root: Path, runs: int, per_run: int, rubric: str) -> None:
    """Each run's grades: ``per_run`` conversations x :data:`RULES` (``write_grades``)."""
    rng = np.random.default_rng(2)
    n = per_run * len(RULES)
    for i in range(runs):
        run_id = f"night-{i:05d}"
        conv = np.repeat([f"conv-{c:05d}" for c in range(per_run)], len(RULES))
        passed = rng.random(n) < 0.8
        verdict = np.where(passed, "pass", "fail")
        points = np.full(n, 10.0)
        frame = grades_frame(
            {
                "run_id": [run_id] * n,
                "conversation_id": conv,
                "cell_id": np.repeat([f"cell-{c // 3:05d}" for c in range(per_run)], len(RULES)),
                "persona_label": ["Busy caller"] * n,
                "repeat": np.repeat(np.arange(per_run) % 3, len(RULES)),
                "rubric_version_id": [rubric] * n,
                "rule_id": np.tile(RULES, per_run),
                "title": np.tile([f"Rule {r}" for r in RULES], per_run),
                "points": points,
                "verdict": verdict,
                "points_awarded": np.where(passed, points, 0.0),
                "grader": ["rules"] * n,
            },
            n,
        )
        write_grades(
            frame, grades_path(root / run_id, rubric), {"evalkit.rubric_version_id": rubric}
        )


def upload(local: Path, url: str) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(use_listings_cache=False)
    files = {str(p): p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()}
    key = url.removeprefix("s3://")
    fs.pipe({f"{key}/{rel}": Path(src).read_bytes() for src, rel in files.items()})


def one_graded(store: str, rubric: str) -> Any:
    """Note a grading in one run's manifest, then take the catalog."""
    record_grades_summary(open_store(store) / "night-00007", rubric, 1000, 81.0)
    return catalog(store)


# --------------------------------------------------------------------------- baselines
def bare_manifests(store: str) -> int:
    """List the runs, fetch every manifest, parse it: what any catalog must do."""
    if store.startswith("s3://"):
        import s3fs

        fs = s3fs.S3FileSystem(use_listings_cache=False)
        key = store.removeprefix("s3://")
        runs = [p for p in fs.ls(key, detail=False, refresh=True)]
        found = fs.cat([f"{r}/manifest.json" for r in runs], on_error="omit")
        return len([json.loads(v) for v in found.values()])
    return len([json.loads(p.read_bytes()) for p in sorted(Path(store).glob("*/manifest.json"))])


def bare_sql(store: str) -> int:
    """The grades files read with pyarrow, one DuckDB query over them: no evalkit."""
    import duckdb

    if store.startswith("s3://"):
        import s3fs

        fs = s3fs.S3FileSystem(use_listings_cache=False)
        key = store.removeprefix("s3://")
        paths = sorted(p for p in fs.find(key) if "/grades/" in p)
        blobs = fs.cat(paths)
        tables = [pq.read_table(pa.BufferReader(blobs[p])) for p in paths]
    else:
        tables = [pq.read_table(p) for p in sorted(Path(store).glob("*/grades/*.parquet"))]
    grades = pa.concat_tables(tables)
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        con.register("grades", grades)
        return len(con.execute(SQL_QUERY).df())
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000, help="runs in the catalog's store")
    parser.add_argument("--sql-runs", type=int, default=100)
    parser.add_argument("--sql-conversations", type=int, default=1000, help="per run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--parts", default="runner,catalog,sql")
    args = parser.parse_args()
    raise_fd_limit()
    parts = set(args.parts.split(","))
    moto, endpoint = start_moto()
    print(f"moto S3 server at {endpoint} (a child process)\n")
    summary: list[str] = []
    try:
        bucket = new_bucket()
        template_run = None
        if "runner" in parts:
            med, template_run = bench_runner(args, bucket)
            ratio = med["s3"] / med["local"]
            print(
                f"\nmedian runner CPU: local {med['local']:.3f} ms/conversation, "
                f"s3 {med['s3']:.3f} ms/conversation"
            )
            summary.append(
                f"runner CPU per conversation, s3 / local: {ratio:.2f}x "
                f"({med['s3']:.2f} vs {med['local']:.2f} ms; target <= 1.5x)"
            )
        if template_run is None:  # a template manifest without the runner part
            grid = make_grid(100)
            proc, base, key = start_emulator()
            try:
                assistant = build_assistant(base, key, [{"name": "Caller 0", "date": "Monday"}])
                folder = tempfile.mkdtemp(prefix="evalkit-bench-store-")
                asyncio.run(run_once(base, key, assistant, grid, folder, "template"))
                template_run = str(Path(folder) / "template")
            finally:
                proc.terminate()
                proc.wait(20)
        template = template_manifest(template_run)
        rubric = "bench-card@v1"
        if "catalog" in parts:
            local = Path(tempfile.mkdtemp(prefix="evalkit-bench-catalog-"))
            write_manifests(local, template, args.runs, rubric)
            url = f"s3://{bucket}/catalog"
            write_manifests(open_store(url), template, args.runs, rubric)
            print(f"\ncatalog of {args.runs} runs (median of {args.repeat}):")
            for kind, store in (("local", str(local)), ("s3", url)):
                cold = None
                if kind == "s3":  # the first catalog of the store: every copy, then the snapshot
                    cold, _ = wall_of(lambda s=store: catalog(s), 1)
                bare, n_bare = wall_of(lambda s=store: bare_manifests(s), args.repeat)
                took, frame = wall_of(lambda s=store: catalog(s), args.repeat)
                assert len(frame) == n_bare == args.runs, (len(frame), n_bare)
                print(
                    f"  {kind:>5}: catalog {took:.3f} s, bare fetch + json {bare:.3f} s "
                    f"({took / bare:.2f}x)"
                )
                summary.append(
                    f"catalog of {args.runs} runs, {kind}: {took:.2f} s "
                    f"(bare {bare:.2f} s, {took / bare:.2f}x; target < 2 s)"
                )
                if cold is not None:
                    changed, frame = wall_of(lambda s=store: one_graded(s, rubric), args.repeat)
                    assert frame.loc[7, f"mean_score.{rubric}"] == 81.0
                    print(
                        f"         first catalog of the store {cold:.3f} s; "
                        f"after one run was graded {changed:.3f} s"
                    )
                    summary.append(
                        f"catalog of {args.runs} runs, s3, first of the store (every copy "
                        f"fetched): {cold:.2f} s; after one run changed: {changed:.2f} s"
                    )
        if "sql" in parts:
            local = Path(tempfile.mkdtemp(prefix="evalkit-bench-sql-"))
            write_manifests(local, template, args.sql_runs, rubric)
            write_grade_files(local, args.sql_runs, args.sql_conversations, rubric)
            url = f"s3://{bucket}/sql"
            upload(local, url)
            n_conv = args.sql_runs * args.sql_conversations
            print(
                f"\nsql over {n_conv:,} conversations' grades "
                f"({n_conv * len(RULES):,} rows; median of {args.repeat}):"
            )
            for kind, store in (("local", str(local)), ("s3", url)):
                bare, n_bare = wall_of(lambda s=store: bare_sql(s), args.repeat)
                took, frame = wall_of(lambda s=store: sql(SQL_QUERY, s), args.repeat)
                assert len(frame) == n_bare == args.sql_runs * len(RULES), (len(frame), n_bare)
                assert int(frame["n"].sum()) == n_conv * len(RULES)
                print(
                    f"  {kind:>5}: sql {took:.3f} s, bare pyarrow + DuckDB {bare:.3f} s "
                    f"({took / bare:.2f}x)"
                )
                summary.append(
                    f"sql over {n_conv:,} conversations' grades, {kind}: {took:.2f} s "
                    f"(bare {bare:.2f} s, {took / bare:.2f}x; target < 3 s)"
                )
    finally:
        moto.terminate()
        moto.wait(20)
    print("\nsummary:")
    for line in summary:
        print(f"  {line}")


if __name__ == "__main__":
    main()
