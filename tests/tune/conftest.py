"""Fixtures the emulator-backed sweep and optimisation tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.demo import DemoService


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DemoService]:
    """The demo's emulator, assistant, judge and store, torn down after the test."""
    with DemoService(tmp_path / "store") as svc:
        yield svc
