"""The service's interface: models, clients, typed errors and the simulate event stream.

``__all__`` holds every public name, the wire sub-models included; :mod:`evalkit` re-exports
the part a user types (the clients, the errors, the simulate events).
"""

from __future__ import annotations

from .._util import publish
from ._async_client import AsyncClient
from ._client import Client
from ._config import Secret
from ._events import (
    Done,
    SimulationEvent,
    SimulationFailed,
    TerminalEvent,
    Transcript,
    TranscriptTurn,
    Turn,
)
from ._exceptions import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    EvalkitError,
    InvalidRequestError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    StreamDeadlineExceeded,
    StreamDropped,
    StreamError,
    UnexpectedResponseError,
)
from ._models import (
    AgentConfig,
    ApiModel,
    Assistant,
    AssistantAlias,
    AssistantAliases,
    AssistantConfig,
    AssistantMetadata,
    AssistantTool,
    BackgroundNoise,
    ContactList,
    ContactListSummary,
    ErrorEnvelope,
    ExcludedCounts,
    Grading,
    ImportErrorRow,
    LlmBlock,
    LlmConfig,
    NoiseCancellation,
    OtherProviderConfig,
    PhraseReplacement,
    PhraseReplacementConfig,
    RefineResponse,
    Scorecard,
    ScorecardRule,
    ServiceAiSttConfig,
    ServiceAiTtsConfig,
    SessionConfig,
    SessionCredentials,
    SttBlock,
    SttConfig,
    ToolExecution,
    ToolParameters,
    TtsBlock,
    TtsConfig,
    VendorASttConfig,
    VendorATtsConfig,
    VendorBSttConfig,
    VendorCSttConfig,
    VendorCTtsConfig,
    VendorDSttConfig,
)
from ._pitfalls import PITFALL_RULES, Pitfall, PitfallRule, config_pitfalls
from ._problems import Problem
from ._retry import RetryPolicy
from ._streaming import AsyncSimulationStream, SimulationStream
from ._tokens import MissingVariables, missing_variables, prompt_tokens

__all__ = [
    "PITFALL_RULES",
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
    "Client",
    "ConfigurationError",
    "ContactList",
    "ContactListSummary",
    "Done",
    "ErrorEnvelope",
    "EvalkitError",
    "ExcludedCounts",
    "Grading",
    "ImportErrorRow",
    "InvalidRequestError",
    "LlmBlock",
    "LlmConfig",
    "MissingVariables",
    "NoiseCancellation",
    "NotFoundError",
    "OtherProviderConfig",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "PhraseReplacement",
    "PhraseReplacementConfig",
    "Pitfall",
    "PitfallRule",
    "Problem",
    "RateLimitError",
    "RefineResponse",
    "RetryPolicy",
    "Scorecard",
    "ScorecardRule",
    "Secret",
    "ServerError",
    "ServiceAiSttConfig",
    "ServiceAiTtsConfig",
    "ServiceUnavailableError",
    "SessionConfig",
    "SessionCredentials",
    "SimulationEvent",
    "SimulationFailed",
    "SimulationStream",
    "StreamDeadlineExceeded",
    "StreamDropped",
    "StreamError",
    "SttBlock",
    "SttConfig",
    "TerminalEvent",
    "ToolExecution",
    "ToolParameters",
    "Transcript",
    "TranscriptTurn",
    "TtsBlock",
    "TtsConfig",
    "Turn",
    "UnexpectedResponseError",
    "VendorASttConfig",
    "VendorATtsConfig",
    "VendorBSttConfig",
    "VendorCSttConfig",
    "VendorCTtsConfig",
    "VendorDSttConfig",
    "config_pitfalls",
    "missing_variables",
    "prompt_tokens",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._retry import RetryDecision as RetryDecision
from ._retry import is_retryable as is_retryable
from ._retry import parse_retry_after as parse_retry_after
from ._version import USER_AGENT as USER_AGENT

_SIBLING_API = (
    "USER_AGENT",
    "RetryDecision",
    "is_retryable",
    "parse_retry_after",
)

publish(globals())
