"""evalkit: simulated-conversation evaluation for real-time voice assistants.

The top level holds what a user types: the clients, errors and events of :mod:`evalkit.api`
(its wire sub-models stay there), and every public name of the data-flow packages
(:mod:`evalkit.grid`, :mod:`evalkit.targets`, :mod:`evalkit.runner`, :mod:`evalkit.store`,
:mod:`evalkit.grading`, :mod:`evalkit.compare`, :mod:`evalkit.refine`, :mod:`evalkit.flows`, :mod:`evalkit.tune`). Nothing is imported
until first use, so ``import evalkit`` (and the ``evalkit`` command) start fast; each name's
``__module__`` is its public home.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

if TYPE_CHECKING:
    from .api import (
        ApiConnectionError,
        ApiError,
        ApiTimeoutError,
        Assistant,
        AssistantConfig,
        AssistantMetadata,
        AsyncClient,
        AsyncSimulationStream,
        AuthenticationError,
        BadRequestError,
        Client,
        ConfigurationError,
        Done,
        EvalkitError,
        InvalidRequestError,
        NotFoundError,
        PaymentRequiredError,
        PermissionDeniedError,
        Problem,
        RateLimitError,
        RetryPolicy,
        Secret,
        ServerError,
        ServiceUnavailableError,
        SimulationEvent,
        SimulationFailed,
        SimulationStream,
        StreamDeadlineExceeded,
        StreamDropped,
        StreamError,
        Transcript,
        Turn,
        UnexpectedResponseError,
    )
    from .compare import *
    from .flows import *
    from .grading import *
    from .grid import *
    from .refine import *
    from .runner import *
    from .store import *
    from .targets import *
    from .tune import *

#: Packages whose whole ``__all__`` is re-exported, in data-flow order.
_PACKAGES = (
    "grid",
    "targets",
    "runner",
    "store",
    "grading",
    "compare",
    "refine",
    "flows",
    "tune",
)


def _homes() -> dict[str, str]:
    """Every top-level name and the package it comes from (imports those packages)."""
    api = importlib.import_module(".api", __name__)
    homes = dict.fromkeys(api.TOP_LEVEL, "api")
    for package in _PACKAGES:
        module = importlib.import_module(f".{package}", __name__)
        homes.update(dict.fromkeys(module.__all__, package))
    return homes


def _ruff_order(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return [*sorted(_homes(), key=_ruff_order), "__version__"]
    if name.startswith("__"):
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    api = importlib.import_module(".api", __name__)
    home = "api" if name in api.TOP_LEVEL else None
    if home is None:
        for package in _PACKAGES:
            if name in importlib.import_module(f".{package}", __name__).__all__:
                home = package
                break
    if home is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_homes()))
