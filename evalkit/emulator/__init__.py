"""A local emulator of the voice assistant service: /v1 as the spec describes it, an admin
API under /_emulator/, fault injection, a time scale and optional SQLite persistence.

Conversations are synthetic (a deterministic scripted dialogue engine) unless an
OpenAI-compatible LLM backend is configured.

>>> from evalkit.emulator import serve
>>> with serve(time_scale=0.01) as emu:  # doctest: +SKIP
...     print(emu.base_url)
"""

from .._util import publish
from ._admin_client import EmulatorAdmin
from ._app import build_app, create_app
from ._core import Emulator, SimulationStats
from ._openapi import openapi_document
from ._server import EmulatorServer, serve
from ._settings import EmulatorSettings

__all__ = [
    "Emulator",
    "EmulatorAdmin",
    "EmulatorServer",
    "EmulatorSettings",
    "SimulationStats",
    "build_app",
    "create_app",
    "openapi_document",
    "serve",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._builds import default_config as default_config
from ._llm_backend import LlmBackend as LlmBackend

_SIBLING_API = ("LlmBackend", "default_config")

publish(globals())
