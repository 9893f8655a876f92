"""OpenAI-compatible chat-completions endpoints, for whatever in evalkit asks an LLM of the
user's own (the judge, the proposer, later a persona generator): one :class:`ChatEndpoint`
with a total deadline per call, a cap on the answer's size, the key kept a
:class:`~evalkit.api.Secret` (out of reprs and pickles), a breaker for an endpoint that looks
down, and the attempts made through the one :class:`~evalkit.RetryPolicy` loop. Private to
evalkit: users meet it through ``Judge`` and ``Proposer``.
"""

from __future__ import annotations

from ._answers import MalformedAnswer, extract_json_object
from ._breaker import ProbeGate
from ._client import CallOptions, ChatClient, call_policy, check_call_options
from ._endpoint import ChatAnswer, ChatCounts, ChatEndpoint, ChatRequest
from ._http import AnswerTooLarge, CallDeadlineExceeded
from ._settings import ChatEnv

__all__ = [
    "AnswerTooLarge",
    "CallDeadlineExceeded",
    "CallOptions",
    "ChatAnswer",
    "ChatClient",
    "ChatCounts",
    "ChatEndpoint",
    "ChatEnv",
    "ChatRequest",
    "MalformedAnswer",
    "ProbeGate",
    "call_policy",
    "check_call_options",
    "extract_json_object",
]
