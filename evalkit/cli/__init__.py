"""The ``evalkit`` command: a thin layer over the Python API, one module per command group.

Every command imports what it needs when it runs, so ``evalkit --help`` and ``--version``
load neither pandas, pyarrow nor the emulator. Every command's errors go through one handler
(:class:`~evalkit.cli._errors.EvalkitGroup`): a short message, the exit codes of
:class:`ExitCode`, the traceback only with ``--debug`` or ``EVALKIT_DEBUG=1``.
"""

from __future__ import annotations

from . import (
    _assistants,
    _bisect,
    _compare,
    _demo,
    _emulator,
    _grade,
    _history,
    _init,
    _judge_drift,
    _labels,
    _lint,
    _optimize,
    _personas,
    _refine,
    _report,
    _run,
    _runs,
    _sql,
    _targets,
    _tune,
    _view,
)
from ._app import app
from ._errors import ExitCode

__all__ = ["ExitCode", "app", "main"]

# imported for their @app.command registrations
_COMMAND_MODULES = (
    _run,
    _runs,
    _history,
    _bisect,
    _labels,
    _judge_drift,
    _targets,
    _grade,
    _compare,
    _report,
    _demo,
    _init,
    _emulator,
    _assistants,
    _refine,
    _personas,
    _view,
    _tune,
    _optimize,
    _lint,
    _sql,
)


def main() -> None:
    """Console-script entry point."""
    app(prog_name="evalkit")
