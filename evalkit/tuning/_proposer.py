"""Proposer: candidate prompts from any OpenAI-compatible chat-completions endpoint.

One call per round asks for ``candidates`` prompts (:mod:`._proposer_prompt`, a versioned
template) of a chat endpoint of the judge's kind (:class:`evalkit._chat.ChatEndpoint`): a
total deadline per call, a bounded read of the answer, the project's retry policy for failed
calls, the breaker for an endpoint that never answers. An answer that is not the JSON asked
for (prose, a broken object) is asked again, up to ``options.max_attempts`` calls; then the
round's proposals are dropped and counted. Entries
without a prompt (or whose prompt is not text: a lone surrogate) are dropped and counted too. With ``cache_dir`` answers are kept by
(model, prompt version, messages), so a resumed optimisation asks nothing twice.

The key goes only into the ``Authorization`` header: no repr, log line, exception or pickle
holds it (a proposer unpickled reads ``EVALKIT_PROPOSER_API_KEY`` again, when it came from
there).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import httpx

from .._chat import (
    ChatClient,
    ChatEndpoint,
    ChatEnv,
    ChatRequest,
    MalformedAnswer,
    call_policy,
    check_call_options,
    extract_json_object,
)
from .._util import atomic_write_bytes
from ..api import ConfigurationError, RetryPolicy, Secret
from ._candidates import clean_text, is_text
from ._proposer_prompt import PROPOSER_PROMPT_VERSION, ProposalRequest, build_messages

__all__ = [
    "Proposal",
    "ProposalBatch",
    "Proposer",
    "ProposerError",
    "ProposerOptions",
]

logger = logging.getLogger("evalkit.tuning.proposer")

MODEL_ENV: Final = "EVALKIT_PROPOSER_MODEL"
BASE_URL_ENV: Final = "EVALKIT_PROPOSER_BASE_URL"
API_KEY_ENV: Final = "EVALKIT_PROPOSER_API_KEY"


class ProposerError(ConfigurationError):
    """A proposer that cannot be used (no model or endpoint, a refused key, a bad URL)."""


#: Where a proposer's settings come from.
PROPOSER_ENV: Final = ChatEnv(
    what="proposer",
    model_env=MODEL_ENV,
    base_url_env=BASE_URL_ENV,
    api_key_env=API_KEY_ENV,
    options="ProposerOptions",
    example="Proposer(model=..., base_url=...)",
    error=ProposerError,
    logger="evalkit.tuning.proposer",
)


@dataclass(frozen=True, slots=True)
class ProposerOptions:
    """``timeout``: total seconds of one call; ``max_attempts``: calls per round at most
    (malformed answers and failed calls alike); ``max_response_bytes``: the most of an answer
    read; ``temperature``; ``retry``: waits between failed calls; ``cache_dir``: answers kept
    on disk by content (None: no cache)."""

    timeout: float = 120.0
    max_attempts: int = 3
    max_response_bytes: int = 1 << 20
    temperature: float = 0.7
    retry: RetryPolicy | None = None
    cache_dir: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        check_call_options(self)

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy in use, making ``max_attempts`` attempts."""
        return call_policy(self)


@dataclass(frozen=True)
class Proposal:
    """One candidate prompt and the proposer's reason for it."""

    instructions: str
    rationale: str = ""


@dataclass(frozen=True)
class ProposalBatch:
    """A round's proposals; ``calls`` made (retries included), ``malformed`` answers or
    entries dropped, ``cached`` when the answer came from the cache."""

    proposals: tuple[Proposal, ...]
    calls: int = 0
    malformed: int = 0
    cached: bool = False
    reasons: tuple[str, ...] = field(default_factory=tuple)


def _entries(content: str) -> tuple[list[Proposal], int]:
    """The proposals in an answer and the entries dropped; MalformedAnswer when there is no
    ``candidates`` list at all."""
    data = extract_json_object(content)
    items = data.get("candidates")
    if not isinstance(items, list):
        raise MalformedAnswer("the answer has no candidates list")
    out: list[Proposal] = []
    dropped = 0
    for item in items:
        text = item.get("instructions") if isinstance(item, Mapping) else None
        if not isinstance(text, str) or not is_text(text):  # a lone surrogate is not text
            dropped += 1
            continue
        why = item.get("rationale") if isinstance(item, Mapping) else None
        out.append(Proposal(text, clean_text(why) if isinstance(why, str) else ""))
    return out, dropped


class Proposer(ChatClient):
    """Candidate prompts from an OpenAI-compatible endpoint (module docstring).

    What is not given comes from ``EVALKIT_PROPOSER_MODEL``, ``EVALKIT_PROPOSER_BASE_URL`` and
    ``EVALKIT_PROPOSER_API_KEY`` (the key is optional); ``evalkit emulator`` prints an emulated
    proposer's settings (model ``emulator-proposer``).
    """

    prompt_version = PROPOSER_PROMPT_VERSION

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        options: ProposerOptions | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.options = options or ProposerOptions()
        self._endpoint = ChatEndpoint(
            model,
            base_url,
            api_key,
            env=PROPOSER_ENV,
            limits=self.options,
            http_client=http_client,
        )

    async def apropose(self, request: ProposalRequest) -> ProposalBatch:
        """The round's proposals (never raises for a malformed answer: it is counted)."""
        messages = build_messages(request)
        path = self._cache_path(messages)
        if path is not None and path.exists():
            try:
                found, dropped = _entries(path.read_text(encoding="utf-8"))
                return ProposalBatch(tuple(found), 0, dropped, cached=True)
            except (OSError, MalformedAnswer):
                pass  # an unreadable entry is a miss
        async with self._endpoint.connections(1) as free:
            answer = await self._endpoint.aask(
                free.get_nowait(),
                ChatRequest(messages, self.options.temperature),
                lambda content: (content, *_entries(content)),
            )
        if answer.value is not None:
            content, found, dropped = answer.value
            if path is not None:
                body = content.encode("utf-8", "backslashreplace")  # a lone surrogate too
                await asyncio.to_thread(atomic_write_bytes, path, body)
            return ProposalBatch(tuple(found), answer.calls, answer.malformed + dropped)
        logger.warning(
            "proposer gave no usable answer in %d call(s) (last: %s); round goes on",
            answer.calls,
            answer.reason or "the endpoint is down",
        )
        return ProposalBatch((), answer.calls, answer.malformed, reasons=answer.reasons)
