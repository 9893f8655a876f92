"""Fixtures of the emulator tests: real uvicorn servers on 127.0.0.1 and raw httpx clients."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from evalkit.emulator import EmulatorServer, serve

from .helpers import client_for


@pytest.fixture
def emu() -> Iterator[EmulatorServer]:
    """A fresh emulator with the default dialogue engine, fast time."""
    with serve(port=0, time_scale=0.001, seed=7) as server:
        yield server


@pytest.fixture
def client(emu: EmulatorServer) -> Iterator[httpx.Client]:
    with client_for(emu) as c:
        yield c
