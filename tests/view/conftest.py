"""Fixtures of the viewer tests: a demo store (prod and draft, graded, 18 conversations each,
made on the embedded emulator) and an emulator with a client for played turns."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import Client
from evalkit.demo import offline_runs
from evalkit.emulator import serve


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return offline_runs(tmp_path_factory.mktemp("demo"), repeats=1, progress=False)


@pytest.fixture
def store(demo_store: Path, tmp_path: Path) -> Path:
    """A copy of the demo store this test may label."""
    copy = tmp_path / "runs"
    shutil.copytree(demo_store, copy)
    return copy


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with serve(seed=9) as emu, Client(emu.base_url, emu.api_key) as api:
        yield api
