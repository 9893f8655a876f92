"""Issue 14, item 3: a full or unwritable disk is a clear StoreError; nothing left locked or
half-made; the journal never corrupted; a resume after freeing space records exactly the grid."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from evalkit.api import Client
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid
from evalkit.runner import RunOptions, run_grid
from evalkit.store import RunWriter, StoreError, identity_hash
from evalkit.store._journal import read_journal
from evalkit.targets import SnapshotStore
from evalkit.targets._snapshots import ConfigSnapshot

from .runner_fixtures import emulator_fixture
from .runner_support import build_assistant, load_grid
from .test_store import record, turns_for

emu = emulator_fixture(time_scale=0.002, seed=41)


class FullDisk:
    """Makes writes to files named ``names`` fail with ENOSPC once ``full`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, after: int = 0) -> None:
        self.full = False
        self.after = after  # journal writes that still succeed first
        self.failures = 0
        real_write = os.write
        real_table = pq.write_table

        def write(fd: int, data: Any) -> int:
            if self.full and self._is_journal(fd):
                if self.after > 0:
                    self.after -= 1
                else:
                    self.failures += 1
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        def write_table(table: Any, where: Any, **kwargs: Any) -> None:
            if self.full:
                Path(where).write_bytes(b"PAR1 half")  # a partial temp file
                self.failures += 1
                raise OSError(errno.ENOSPC, "IOError: No space left on device")
            real_table(table, where, **kwargs)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(pq, "write_table", write_table)

    @staticmethod
    def _is_journal(fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").endswith("journal.jsonl")
        except OSError:
            return False


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".") and p.suffix == ".tmp"]


def check_journal_whole(run_dir: Path) -> int:
    data = (run_dir / "journal.jsonl").read_bytes()
    assert not data or data.endswith(b"\n")
    lines = data.splitlines()
    for line in lines:
        json.loads(line)  # every line whole
    assert read_journal(run_dir / "journal.jsonl").lines == len(lines)
    return len(lines)


# --------------------------------------------------------------------------- mid-run


@pytest.mark.slow
def test_disk_full_mid_run_is_a_store_error_and_a_resume_records_exactly_the_grid(
    emu: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = build_assistant(emu)
    grid: Grid = load_grid(4, 4)
    disk = FullDisk(monkeypatch, after=3)
    disk.full = True
    client = Client(emu.base_url, emu.api_key)
    with pytest.raises(StoreError) as caught:
        run_grid(
            grid,
            assistant,
            client=client,
            store=tmp_path,
            run_id="full",
            options=RunOptions(progress=False),
        )
    assert not isinstance(caught.value, BaseExceptionGroup)
    message = str(caught.value)
    assert "journal.jsonl" in message
    assert "No space left on device" in message
    assert "ENOSPC" in message
    assert disk.failures >= 1
    run_dir = tmp_path / "full"
    kept = check_journal_whole(run_dir)
    assert kept == 3
    assert temp_files(tmp_path) == []

    disk.full = False  # space freed: the same process resumes at once (no RunLockedError)
    run = run_grid(
        grid,
        assistant,
        client=client,
        store=tmp_path,
        run_id="full",
        options=RunOptions(progress=False),
    )
    conv = run.conversations
    assert len(conv) == len(grid)
    assert set(conv["conversation_id"]) == {s.conversation_id for s in grid.conversations()}
    assert conv["conversation_id"].is_unique
    assert run.manifest["outcome"] == "complete"
    assert run.manifest["journal"]["superseded"] == 0
    assert check_journal_whole(run_dir) == len(grid)
    assert temp_files(tmp_path) == []


def test_a_failed_finalize_releases_the_lock_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    man = {"identity": identity_hash({"grid": "g"}), "assistant_id": "a"}
    writer = RunWriter.create(tmp_path, "r1", man, fsync=False)
    for i in range(3):
        writer.append(record(i), turns_for(i))
    disk = FullDisk(monkeypatch)
    disk.full = True
    with pytest.raises(StoreError, match=r"turns\.parquet.*No space left"):
        writer.finalize()
    assert writer.closed
    assert temp_files(tmp_path) == []
    disk.full = False
    again = RunWriter.resume(tmp_path, "r1", man, fsync=False)  # not locked
    assert len(again) == 3
    run = again.finalize()
    assert len(run.conversations) == 3
    assert check_journal_whole(tmp_path / "r1") == 3


def test_a_full_journal_write_is_a_store_error_and_the_journal_stays_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    man = {"identity": identity_hash({"grid": "g"}), "assistant_id": "a"}
    writer = RunWriter.create(tmp_path, "r1", man, fsync=False)
    writer.append(record(0), turns_for(0))
    disk = FullDisk(monkeypatch)
    disk.full = True
    with pytest.raises(StoreError, match="ENOSPC"):
        writer.append(record(1), turns_for(1))
    disk.full = False
    writer.append(record(1), turns_for(1))
    writer.close()
    assert check_journal_whole(tmp_path / "r1") == 2


# --------------------------------------------------------------------------- unwritable stores


def test_a_store_path_that_is_a_file_is_a_store_error(emu: EmulatorServer, tmp_path: Path) -> None:
    store = tmp_path / "runs"
    store.write_text("not a folder")
    man = {"identity": identity_hash({"grid": "g"}), "assistant_id": "a"}
    with pytest.raises(StoreError, match=r"not a folder|is a file") as caught:
        RunWriter.open(store, "r1", man)
    assert str(store) in str(caught.value)
    assistant = build_assistant(emu)
    with pytest.raises(StoreError) as via_run:
        run_grid(
            load_grid(1, 1),
            assistant,
            client=Client(emu.base_url, emu.api_key),
            store=store,
            options=RunOptions(progress=False),
        )
    assert str(store) in str(via_run.value)
    assert store.read_text() == "not a folder"


def test_a_read_only_store_is_a_store_error(
    emu: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only file system (simulated: the tests may run as root, which ignores modes)."""
    real_mkdir = Path.mkdir
    real_open = os.open
    store = tmp_path / "ro"

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.is_relative_to(store):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        real_mkdir(self, *args, **kwargs)

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path).is_relative_to(store) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(os, "open", open_)
    man = {"identity": identity_hash({"grid": "g"}), "assistant_id": "a"}
    with pytest.raises(StoreError, match="read-only") as caught:
        RunWriter.create(store, "r1", man)
    assert str(store) in str(caught.value)
    assistant = build_assistant(emu)
    with pytest.raises(StoreError, match="read-only"):
        run_grid(
            load_grid(1, 1),
            assistant,
            client=Client(emu.base_url, emu.api_key),
            store=store,
            options=RunOptions(progress=False),
        )


def test_a_failed_snapshot_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshots = SnapshotStore(tmp_path)
    snap = ConfigSnapshot("asst_1", 1, "n", {"agent": {"instructions": "x"}}, "now")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int) -> None:
            self.fh = real_fdopen(fd, "wb")

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, data: bytes) -> int:
            self.fh.write(data[:5])
            self.fh.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Full(fd))
    with pytest.raises(OSError, match="No space left"):
        snapshots.save(snap)
    monkeypatch.undo()
    assert temp_files(tmp_path) == []
    assert snapshots.load("asst_1", 1) is None
    snapshots.save(snap)
    assert snapshots.load("asst_1", 1) == snap
