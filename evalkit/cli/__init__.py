"""The ``evalkit`` command: a thin layer over the Python API, one module per command group.

Every command imports what it needs when it runs, so ``evalkit --help`` and ``--version``
load neither pandas, pyarrow nor the emulator.
"""

from __future__ import annotations

from . import _demo, _emulator, _run, _targets
from ._app import app

__all__ = ["app", "main"]

_COMMAND_MODULES = (_run, _targets, _demo, _emulator)  # imported for their @app.command


def main() -> None:
    """Console-script entry point."""
    app()
