"""``evalkit runs`` over a store of 100 runs, as a user types it: a child process each time.

Issue 33 item 14: the command must answer in under 1 s. The store is built once: one real run
of ``--conversations`` conversations on the emulator (a child process), copied ``--runs`` times
with each copy's manifest rewritten by the store's ``write_manifest`` (its own run id, one a
night); ``--interrupted`` of the copies lose ``finalized_at`` (a killed run: the command counts
its journal). Then, in interleaved rounds, wall time of:

* ``python -c pass``: the interpreter's start-up (the floor of any command);
* ``python -c "import pyarrow.parquet"``: start-up plus the parquet stack (a bare baseline for
  a command that reads a store);
* ``evalkit runs --store DIR`` (the installed console script's module, ``python -m evalkit``).

Printed: median and best wall per command, and each as a ratio of the baselines. Usage::

    python benchmarks/bench_runs_cli.py                 # ~20 s
    python benchmarks/bench_runs_cli.py --runs 100 --rounds 15 --interrupted 5
    python benchmarks/bench_runs_cli.py --before ../other-checkout   # that code's figure too
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _harness import build_assistant, make_grid, start_emulator

from evalkit import AsyncClient
from evalkit.runner import RunOptions, arun_grid
from evalkit.store import read_stored_manifest
from evalkit.store._manifest import write_manifest


async def _one_run(base: str, key: str, folder: Path, conversations: int) -> None:
    assistant = build_assistant(base, key, [{"name": "Caller 0", "date": "Monday"}])
    async with AsyncClient(base, key) as client:
        await arun_grid(
            make_grid(conversations),
            assistant,
            client=client,
            target="draft",
            store=str(folder),
            run_id="template",
            options=RunOptions(concurrency=16, progress=False),
        )


def build_store(runs: int, conversations: int, interrupted: int) -> Path:
    """A store of ``runs`` copies of one real run (see the module)."""
    root = Path(tempfile.mkdtemp(prefix="evalkit-bench-runs-"))
    scratch = root / ".template"
    proc, base, key = start_emulator()
    try:
        asyncio.run(_one_run(base, key, scratch, conversations))
    finally:
        proc.terminate()
        proc.wait(20)
    template = read_stored_manifest(scratch / "template")
    if template is None:
        raise SystemExit("the template run has no manifest")
    start = datetime(2026, 1, 1, 3, 17, tzinfo=UTC)
    for i in range(runs):
        run_id = f"night-{i:05d}"
        when = start + timedelta(days=i)
        shutil.copytree(scratch / "template", root / run_id)
        manifest = {**template, "run_id": run_id, "created_at": when.isoformat()}
        if i < interrupted:
            manifest["finalized_at"] = None
        else:
            manifest["finalized_at"] = (when + timedelta(minutes=20)).isoformat()
        write_manifest(root / run_id / "manifest.json", manifest)
    shutil.rmtree(scratch)
    return root


def wall(argv: list[str]) -> float:
    """Wall seconds of one child process (its output checked and dropped)."""
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--interrupted", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="also time `evalkit runs` from another checkout's source folder (PYTHONPATH=SRC)",
    )
    args = parser.parse_args()
    store = build_store(args.runs, args.conversations, args.interrupted)
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import pyarrow.parquet": [sys.executable, "-c", "import pyarrow.parquet"],
        "evalkit runs": [sys.executable, "-m", "evalkit", "runs", "--store", str(store)],
    }
    if args.before:
        commands["evalkit runs (before)"] = [
            "env",
            f"PYTHONPATH={Path(args.before).resolve()}",
            *commands["evalkit runs"],
        ]
    try:
        out = subprocess.run(commands["evalkit runs"], check=True, capture_output=True, text=True)
        listed = len(out.stdout.splitlines()) - 1
        if listed != args.runs:
            raise SystemExit(f"evalkit runs listed {listed} runs, not {args.runs}")
        for argv in commands.values():  # warm-up: the page cache, .pyc files
            wall(argv)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for r in range(args.rounds):
            names = list(commands) if r % 2 == 0 else list(reversed(commands))
            for name in names:
                times[name].append(wall(commands[name]))
    finally:
        shutil.rmtree(store, ignore_errors=True)
    bare, parquet = (statistics.median(times[n]) for n in list(commands)[:2])
    print(
        f"`evalkit runs` over {args.runs} runs ({args.interrupted} never finalized), "
        f"{args.conversations} conversations each; {args.rounds} rounds, wall seconds"
    )
    print(f"{'command':<24} {'median':>7} {'best':>7} {'/ pass':>7} {'/ pyarrow':>9}")
    for name, seconds in times.items():
        med = statistics.median(seconds)
        print(
            f"{name:<24} {med:>7.3f} {min(seconds):>7.3f} {med / bare:>6.2f}x {med / parquet:>8.2f}x"
        )
    verdict = "met" if statistics.median(times["evalkit runs"]) < 1.0 else "NOT met"
    print(f"target: evalkit runs under 1 s: {verdict}")


if __name__ == "__main__":
    main()
