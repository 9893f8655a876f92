"""A pytest session's shared state, in the standard library only (the plugin imports it at
start, so it may not pull pandas or the network): the context of the check being run
(:mod:`._context`) and the folder xdist workers share, with the one emulator they use
(:mod:`._shared`). Private to evalkit: ``__all__`` is what its siblings use."""

from __future__ import annotations

from ._context import CheckContext, check_context, current_context
from ._shared import EMULATOR_FILE, SharedFolder, stop_shared_emulator

__all__ = [
    "EMULATOR_FILE",
    "CheckContext",
    "SharedFolder",
    "check_context",
    "current_context",
    "stop_shared_emulator",
]
