"""Fixture factories for the runner tests, imported explicitly by the modules that use them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evalkit.emulator import EmulatorServer, serve


def emulator_fixture(**options: Any) -> Any:
    """A module-scoped fixture serving one emulator made by ``serve(**options)``.

    Assign it to a module name (``emu = emulator_fixture(seed=1)``): that name is the fixture's.
    """

    @pytest.fixture(scope="module")
    def server() -> Iterator[EmulatorServer]:
        with serve(**options) as running:
            yield running

    return server
