"""The journal's group commit: RunWriter.aappend returns only after an fsync covering its line."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from evalkit.store import RunWriter, StoreError, load_run
from evalkit.store import _journal as journal_module

from .test_store import manifest, record, turns_for


class FsyncSpy:
    """Counts fsyncs, each made slow by ``delay`` seconds."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, delay: float = 0.0) -> None:
        self.fsyncs = 0
        self.lock = threading.Lock()
        self.delay = delay
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            real_fsync(fd)
            if delay:
                threading.Event().wait(delay)  # a slow disk: later lines pile up meanwhile
            with self.lock:
                self.fsyncs += 1

        monkeypatch.setattr(journal_module.os, "fsync", fsync)


def test_concurrent_aappends_share_fsyncs_and_all_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    spy = FsyncSpy(monkeypatch, delay=0.02)
    n = 40

    async def main() -> None:
        await asyncio.gather(*(writer.aappend(record(i), turns_for(i)) for i in range(n)))

    asyncio.run(main())
    assert len(writer) == n  # every append returned and was remembered
    appended_fsyncs = spy.fsyncs
    assert 1 <= appended_fsyncs < n  # batched: fewer fsyncs than lines
    run = writer.finalize()
    assert sorted(run.conversations["conversation_id"]) == [f"conv-{i:03d}" for i in range(n)]
    assert len(run.turns) == 3 * n


def test_an_aappend_returns_only_after_an_fsync_that_followed_its_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    events: list[str] = []  # "write conv-007", "fsync"
    real_fsync, real_write = os.fsync, os.write
    lock = threading.Lock()

    def write(fd: int, data: Any) -> int:
        cid = re.search(rb'"conversation_id":"(conv-\d+)"', bytes(data))
        with lock:
            events.append(f"write {cid.group(1).decode() if cid else '?'}")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        threading.Event().wait(0.005)  # a slow disk, so lines queue behind a running fsync
        real_fsync(fd)
        with lock:
            events.append("fsync")

    monkeypatch.setattr(journal_module.os, "write", write)
    monkeypatch.setattr(journal_module.os, "fsync", fsync)
    unsynced_at_return: list[str] = []

    async def one(i: int) -> None:
        await asyncio.sleep(0.001 * (i % 5))
        await writer.aappend(record(i), turns_for(i))
        with lock:
            written = events.index(f"write conv-{i:03d}")
            if "fsync" not in events[written:]:
                unsynced_at_return.append(f"conv-{i:03d}")

    async def main() -> None:
        await asyncio.gather(*(one(i) for i in range(30)))

    asyncio.run(main())
    assert unsynced_at_return == []
    assert sum(e.startswith("write") for e in events) == 30
    assert events.count("fsync") < 30  # and they were batched
    writer.close()


def test_a_cancelled_aappend_is_still_recorded(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())

    async def main() -> None:
        task = asyncio.create_task(writer.aappend(record(1), turns_for(1)))
        await asyncio.sleep(0)  # the line is queued for the committer
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    run = writer.finalize()  # finalize waits for the committer
    assert list(run.conversations["conversation_id"]) == ["conv-001"]


def test_aappend_after_close_is_a_store_error(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    writer.close()

    async def main() -> None:
        await writer.aappend(record(1), turns_for(1))

    with pytest.raises(StoreError, match="closed"):
        asyncio.run(main())


def test_a_bad_record_fails_its_own_aappend_only(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())

    async def main() -> list[Any]:
        return await asyncio.gather(
            writer.aappend(record(1), turns_for(1)),
            writer.aappend(record(2, n_turns=5), turns_for(2)),  # n_turns does not match
            writer.aappend(record(3), turns_for(3)),
            return_exceptions=True,
        )

    results = asyncio.run(main())
    assert results[0] is None
    assert results[2] is None
    assert isinstance(results[1], ValueError)
    run = writer.finalize()
    assert sorted(run.conversations["conversation_id"]) == ["conv-001", "conv-003"]


def test_a_failed_write_fails_that_append_and_leaves_no_half_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = RunWriter.create(tmp_path, "r1", manifest())
    real_write = os.write
    calls = {"n": 0}

    def flaky_write(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 2:  # the second line's write: half of it, then the disk is full
            real_write(fd, bytes(data)[:10])
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(journal_module.os, "write", flaky_write)

    async def main() -> list[Any]:
        results = []
        for i in range(3):  # one after another, so the second line is the failing write
            try:
                await writer.aappend(record(i), turns_for(i))
                results.append(None)
            except StoreError as exc:
                results.append(exc)
        return results

    results = asyncio.run(main())
    assert results[0] is None
    assert results[2] is None
    assert isinstance(results[1], StoreError)
    writer.close()
    run = load_run(tmp_path / "r1")
    assert sorted(run.conversations["conversation_id"]) == ["conv-000", "conv-002"]
