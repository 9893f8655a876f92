"""Benchmark: loading a large run into DataFrames (target: 100k conversations / 1M turns < 3 s).

Generates a synthetic run through ``RunWriter`` (fsync off), finalizes it, then times:

* ``load_run(...).conversations`` + ``.turns`` from the parquet tables, against the bare
  ``pyarrow.parquet.read_table(...).to_pandas()`` of the same files (same run, same cache state);
* ``finalize()`` (journal replay + both parquet files, written atomically);
* loading a crashed run (no parquet tables) from the journal.

Usage::

    python benchmarks/bench_load_run.py                    # 100k conversations, 10 turns each
    python benchmarks/bench_load_run.py --conversations 20000 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from evalkit.store import (
    ConversationRecord,
    RunWriter,
    TurnRecord,
    identity_hash,
    load_run,
    transcript_hash,
)

WORDS = [
    "jee",
    "haan",
    "main",
    "kal",
    "subah",
    "das",
    "baje",
    "aa",
    "sakta",
    "hoon",
    "appointment",
    "confirm",
    "karna",
    "hai",
    "please",
    "doctor",
    "sahib",
    "clinic",
    "address",
    "dobara",
    "batayein",
    "shukriya",
    "نہیں",
    "جی",
    "ہاں",
    "میں",
    "کل",
    "صبح",
    "آؤں",
    "گا",
    "شکریہ",
    "ڈاکٹر",
    "صاحب",
    "وقت",
    "تاریخ",
    "کلینک",
    "بات",
    "سنیں",
    "😊",
    "okay",
    "sorry",
    "busy",
    "hoon",
    "later",
    "call",
]
STATUSES = ("done",) * 90 + ("error",) * 4 + ("dropped",) * 3 + ("failed",) * 3


def generate(store: Path, n_conversations: int, turns_per: int, seed: int) -> RunWriter:
    """Write a synthetic run of ``n_conversations`` through RunWriter (fsync off)."""
    rng = random.Random(seed)
    run_id = "bench"
    manifest = {"identity": identity_hash({"bench": n_conversations}), "assistant_id": "asst_b"}
    writer = RunWriter.create(store, run_id, manifest, fsync=False)
    t0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    personas = [f"Persona {i}" for i in range(12)]
    for c in range(n_conversations):
        status = rng.choice(STATUSES)
        # failed conversations have no transcript; a third of done ones get one turn more, so
        # the run holds about n_conversations x turns_per turns in all
        n = 0 if status == "failed" else turns_per + (status == "done" and rng.random() < 1 / 3)
        turns = [
            TurnRecord(i, "agent" if i % 2 else "caller", " ".join(rng.choices(WORDS, k=12)))
            for i in range(1, n + 1)
        ]
        started = t0 + timedelta(seconds=c)
        record = ConversationRecord(
            run_id=run_id,
            conversation_id=f"{c:07d}",
            cell_id=f"{rng.getrandbits(64):016x}",
            repeat=c % 3,
            persona_label=personas[c % len(personas)],
            variables=json.dumps({"name": "علی", "slot": f"{c % 24:02d}:00"}, ensure_ascii=False),
            context=None if c % 2 else "Clinic reminder",
            status=status,  # type: ignore[arg-type]
            error_message=None if status == "done" else f"{status} after retries",
            attempts=1 + (status != "done"),
            n_turns=n,
            ended_by=turns[-1].role if turns else None,
            first_turn_s=rng.uniform(0.2, 1.5) if turns else None,
            duration_s=rng.uniform(5, 60),
            started_at=started,
            finished_at=started + timedelta(seconds=30),
            transcript_hash=transcript_hash(turns) if turns else None,
            assistant_version=7,
            target="draft",
            persona_id=f"p{c % 12}",
        )
        writer.append(record, turns)
    return writer


def timed(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median wall time of each function, run interleaved ``repeat`` times after a warm-up."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for round_ in range(repeat + 1):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            if round_:  # round 0 warms the page cache and lazy imports
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


FRESH = """
import sys, time
if sys.argv[2] == "load":
    from evalkit.store import load_run
    start = time.perf_counter()
    run = load_run(sys.argv[1]); run.conversations; run.turns
else:
    import pandas, pyarrow.parquet as pq
    start = time.perf_counter()
    for name in ("conversations.parquet", "turns.parquet"):
        pq.read_table(f"{sys.argv[1]}/{name}").to_pandas()
print(time.perf_counter() - start)
"""


def fresh_process(path: Path, repeat: int) -> dict[str, float]:
    """Median seconds of the first load in a new interpreter (after its imports), interleaved."""
    times: dict[str, list[float]] = {"load": [], "bare": []}
    for _ in range(repeat):
        for what, values in times.items():
            out = subprocess.run(
                [sys.executable, "-c", FRESH, str(path), what],
                capture_output=True,
                text=True,
                check=True,
            )
            values.append(float(out.stdout.strip()))
    return {what: statistics.median(values) for what, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=10, help="turns per done conversation")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", type=Path, default=None, help="keep the run here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
        store = args.store or Path(tmp)
        start = time.perf_counter()
        writer = generate(store, args.conversations, args.turns, args.seed)
        gen_s = time.perf_counter() - start
        path, journal = writer.path, writer.path / "journal.jsonl"
        start = time.perf_counter()
        run = writer.finalize()
        finalize_s = time.perf_counter() - start
        n_conv, n_turns = len(run.conversations), len(run.turns)
        del run

        def load() -> None:
            loaded = load_run(path)
            _ = loaded.conversations, loaded.turns
            assert not loaded.from_journal

        def bare() -> None:
            for name in ("conversations.parquet", "turns.parquet"):
                pq.read_table(path / name).to_pandas()

        timings = timed({"load": load, "bare": bare}, args.repeat)
        fresh = fresh_process(path, args.repeat)
        sizes = {
            "journal": journal.stat().st_size,
            "parquet": sum(
                (path / f"{n}.parquet").stat().st_size for n in ("conversations", "turns")
            ),
        }
        for name in ("conversations.parquet", "turns.parquet"):
            (path / name).unlink()  # now it looks like a crashed run

        def replay() -> None:
            loaded = load_run(path)
            _ = loaded.conversations, loaded.turns
            assert loaded.from_journal

        def resume() -> None:
            RunWriter.resume(store, "bench", {"identity": identity_hash({"bench": n_conv})}).close()

        timings.update(timed({"replay": replay, "resume": resume}, args.repeat))

    load_s, bare_s = timings["load"], timings["bare"]
    print(f"run: {n_conv:,} conversations, {n_turns:,} turns")
    print(
        f"sizes: journal {sizes['journal'] / 1e6:.0f} MB, parquet {sizes['parquet'] / 1e6:.0f} MB"
    )
    print(f"load_run .conversations + .turns  : {load_s:6.3f} s   (target < 3 s)")
    print(f"bare read_table().to_pandas()     : {bare_s:6.3f} s   ratio {load_s / bare_s:.2f}x")
    print(
        f"first load in a new process       : {fresh['load']:6.3f} s   "
        f"bare {fresh['bare']:.3f} s, ratio {fresh['load'] / fresh['bare']:.2f}x"
    )
    print(f"finalize (journal -> parquet)     : {finalize_s:6.3f} s")
    print(
        f"crashed run, load from journal    : {timings['replay']:6.3f} s   "
        f"ratio {timings['replay'] / bare_s:.2f}x"
    )
    print(f"resume a crashed run (RunWriter)  : {timings['resume']:6.3f} s")
    print(
        f"appends, fsync off (incl. records): {n_conv / gen_s:,.0f} conversations/s ({gen_s:.1f} s)"
    )


if __name__ == "__main__":
    main()
