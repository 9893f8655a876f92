"""The service's interface: models, clients, typed errors and the simulate event stream.

``__all__`` holds every public name, the wire sub-models included; :mod:`evalkit` re-exports
the part a user types (the clients, the errors, the simulate events).
"""

from __future__ import annotations

from .._util import publish
from ._any_client import AnyClient
from ._async_client import AsyncClient
from ._client import Client
from ._config import Secret
from ._events import (
    Done,
    Role,
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
from ._pitfalls import PITFALL_RULES, Pitfall, PitfallRecords, PitfallRule, config_pitfalls
from ._problems import Problem
from ._retry import OnRetry, RetryDecision, RetryPolicy
from ._streaming import AsyncSimulationStream, SimulationStream
from ._tokens import MissingVariables, missing_variables, prompt_tokens

__all__ = [
    "PITFALL_RULES",
    "AgentConfig",
    "AnyClient",
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
    "OnRetry",
    "OtherProviderConfig",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "PhraseReplacement",
    "PhraseReplacementConfig",
    "Pitfall",
    "PitfallRecords",
    "PitfallRule",
    "Problem",
    "RateLimitError",
    "RefineResponse",
    "RetryDecision",
    "RetryPolicy",
    "Role",
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
from ._advice import config_advice as config_advice
from ._any_client import as_async_client as as_async_client
from ._any_client import async_client as async_client
from ._limits import API_KEY_PREFIX as API_KEY_PREFIX
from ._limits import DEFAULT_SESSION_TTL_S as DEFAULT_SESSION_TTL_S
from ._limits import KEEPALIVE_INTERVAL_S as KEEPALIVE_INTERVAL_S
from ._limits import LLM_MODELS as LLM_MODELS
from ._limits import MAX_OWNER_FEEDBACK_CHARS as MAX_OWNER_FEEDBACK_CHARS
from ._limits import MAX_VARIABLE_KEY_CHARS as MAX_VARIABLE_KEY_CHARS
from ._limits import MAX_VARIABLES_JSON_CHARS as MAX_VARIABLES_JSON_CHARS
from ._limits import OUTPUT_FORMATS as OUTPUT_FORMATS
from ._limits import RATE_LIMIT_MESSAGE as RATE_LIMIT_MESSAGE
from ._limits import SIMULATION_CEILING_S as SIMULATION_CEILING_S
from ._limits import STT_MODELS as STT_MODELS
from ._limits import TTS_PROVIDERS as TTS_PROVIDERS
from ._limits import VOICE_IDS as VOICE_IDS
from ._patch import patch_problems as patch_problems
from ._problems import errors_only as errors_only
from ._problems import type_name as type_name
from ._requests import Context as Context
from ._requests import CreateAssistantBody as CreateAssistantBody
from ._requests import PhraseReplacementBody as PhraseReplacementBody
from ._requests import RefineBody as RefineBody
from ._requests import SessionBody as SessionBody
from ._requests import SimulateBody as SimulateBody
from ._requests import TextToSpeechBody as TextToSpeechBody
from ._requests import TtsText as TtsText
from ._requests import UpdateAssistantBody as UpdateAssistantBody
from ._requests import Variables as Variables
from ._requests import VoiceId as VoiceId
from ._requests import check_context as check_context
from ._requests import check_variables as check_variables
from ._requests import request_errors as request_errors
from ._retry import is_retryable as is_retryable
from ._retry import parse_retry_after as parse_retry_after
from ._rules import Rule as Rule
from ._version import USER_AGENT as USER_AGENT

_SIBLING_API = (
    "API_KEY_PREFIX",
    "DEFAULT_SESSION_TTL_S",
    "KEEPALIVE_INTERVAL_S",
    "LLM_MODELS",
    "MAX_OWNER_FEEDBACK_CHARS",
    "MAX_VARIABLES_JSON_CHARS",
    "MAX_VARIABLE_KEY_CHARS",
    "OUTPUT_FORMATS",
    "RATE_LIMIT_MESSAGE",
    "SIMULATION_CEILING_S",
    "STT_MODELS",
    "TTS_PROVIDERS",
    "USER_AGENT",
    "VOICE_IDS",
    "Context",
    "CreateAssistantBody",
    "PhraseReplacementBody",
    "RefineBody",
    "Rule",
    "SessionBody",
    "SimulateBody",
    "TextToSpeechBody",
    "TtsText",
    "UpdateAssistantBody",
    "Variables",
    "VoiceId",
    "as_async_client",
    "async_client",
    "check_context",
    "check_variables",
    "config_advice",
    "errors_only",
    "is_retryable",
    "parse_retry_after",
    "patch_problems",
    "request_errors",
    "type_name",
)

publish(globals())
