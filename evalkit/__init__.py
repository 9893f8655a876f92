"""evalkit: simulated-conversation evaluation for real-time voice assistants.

The service's client (:class:`Client`, :class:`AsyncClient`) and its models and errors load
eagerly; the data-side names (grids, runs, stores: pandas and pyarrow) load on first use, so
``import evalkit`` stays quick for scripts that only talk to the service.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__
from .api import *

if TYPE_CHECKING:
    from ._personas import Persona, PersonaError, load_personas
    from ._records import ConversationRecord, TurnRecord, transcript_hash
    from .grid import Cell, ConversationSlot, Grid, load_variables
    from .runner import Budget, RunAborted, arun_grid, run_grid
    from .snapshots import ConfigSnapshot, SnapshotStore
    from .store import (
        IdentityMismatchError,
        Run,
        RunWriter,
        StoreError,
        list_runs,
        load_run,
        load_runs,
    )
    from .targets import TargetError, Variant

_LAZY: dict[str, str] = {
    "Budget": "runner",
    "Cell": "grid",
    "ConfigSnapshot": "snapshots",
    "ConversationRecord": "_records",
    "ConversationSlot": "grid",
    "Grid": "grid",
    "IdentityMismatchError": "store",
    "Persona": "_personas",
    "PersonaError": "_personas",
    "Run": "store",
    "RunAborted": "runner",
    "RunWriter": "store",
    "SnapshotStore": "snapshots",
    "StoreError": "store",
    "TargetError": "targets",
    "TurnRecord": "_records",
    "Variant": "targets",
    "arun_grid": "runner",
    "list_runs": "store",
    "load_personas": "_personas",
    "load_run": "store",
    "load_runs": "store",
    "load_variables": "grid",
    "run_grid": "runner",
    "transcript_hash": "_records",
}

__all__ = [
    "AgentConfig",
    "ApiConnectionError",
    "ApiError",
    "ApiModel",
    "ApiTimeoutError",
    "Assistant",
    "AssistantAlias",
    "AssistantAliases",
    "AssistantConfig",
    "AssistantMetadata",
    "AssistantTool",
    "AsyncClient",
    "AsyncSimulationStream",
    "AuthenticationError",
    "BackgroundNoise",
    "BadRequestError",
    "Budget",
    "Cell",
    "Client",
    "ConfigSnapshot",
    "ConfigurationError",
    "ContactList",
    "ContactListSummary",
    "ConversationRecord",
    "ConversationSlot",
    "Done",
    "ErrorEnvelope",
    "EvalkitError",
    "ExcludedCounts",
    "Grading",
    "Grid",
    "IdentityMismatchError",
    "ImportErrorRow",
    "InvalidRequestError",
    "LlmBlock",
    "LlmConfig",
    "NoiseCancellation",
    "NotFoundError",
    "OtherProviderConfig",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "Persona",
    "PersonaError",
    "PhraseReplacement",
    "PhraseReplacementConfig",
    "Problem",
    "RateLimitError",
    "RefineResponse",
    "RetryPolicy",
    "Run",
    "RunAborted",
    "RunWriter",
    "Scorecard",
    "ScorecardRule",
    "ServerError",
    "ServiceAiSttConfig",
    "ServiceAiTtsConfig",
    "ServiceUnavailableError",
    "SessionConfig",
    "SessionCredentials",
    "SimulationEvent",
    "SimulationFailed",
    "SimulationStream",
    "SnapshotStore",
    "StoreError",
    "StreamDeadlineExceeded",
    "StreamDropped",
    "StreamError",
    "SttBlock",
    "SttConfig",
    "TargetError",
    "TerminalEvent",
    "ToolExecution",
    "ToolParameters",
    "Transcript",
    "TranscriptTurn",
    "TtsBlock",
    "TtsConfig",
    "Turn",
    "TurnRecord",
    "UnexpectedResponseError",
    "Variant",
    "VendorASttConfig",
    "VendorATtsConfig",
    "VendorBSttConfig",
    "VendorCSttConfig",
    "VendorCTtsConfig",
    "VendorDSttConfig",
    "__version__",
    "arun_grid",
    "list_runs",
    "load_personas",
    "load_run",
    "load_runs",
    "load_variables",
    "run_grid",
    "transcript_hash",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
