"""PersonaGenerator: caller personas from any OpenAI-compatible chat-completions endpoint.

One call asks for the personas of a batch of trait combinations (:mod:`._prompt`, a versioned
template) from a chat endpoint of the judge's kind (:class:`evalkit._chat.ChatEndpoint`): a
total deadline per call, a bounded read of the answer, the project's retry policy for failed
calls, the breaker for an endpoint that never answers. An answer that is not the JSON asked
for is asked again, up to ``options.max_attempts`` calls; then the batch's personas are
dropped and counted. With ``cache_dir`` answers are kept by (model, prompt version,
messages), so a resumed search asks nothing twice.

The key goes only into the ``Authorization`` header: no repr, log line, exception, pickle or
persona file holds it (a generator unpickled reads ``EVALKIT_GENERATOR_API_KEY`` again, when
it came from there).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import httpx

from .._chat import (
    ChatClient,
    ChatEndpoint,
    ChatEnv,
    ChatRequest,
    MalformedAnswer,
    call_policy,
    check_call_options,
)
from .._util import atomic_write_bytes
from ..api import ConfigurationError, RetryPolicy, Secret
from ._prompt import GENERATOR_PROMPT_VERSION, GenerationRequest, build_messages, read_personas

__all__ = [
    "GeneratedBatch",
    "GeneratorError",
    "GeneratorOptions",
    "PersonaGenerator",
    "PersonaSource",
]

logger = logging.getLogger("evalkit.personas.generator")

MODEL_ENV: Final = "EVALKIT_GENERATOR_MODEL"
BASE_URL_ENV: Final = "EVALKIT_GENERATOR_BASE_URL"
API_KEY_ENV: Final = "EVALKIT_GENERATOR_API_KEY"


class GeneratorError(ConfigurationError):
    """A persona generator that cannot be used (no model or endpoint, a bad URL)."""


#: Where a generator's settings come from.
GENERATOR_ENV: Final = ChatEnv(
    what="persona generator",
    model_env=MODEL_ENV,
    base_url_env=BASE_URL_ENV,
    api_key_env=API_KEY_ENV,
    options="GeneratorOptions",
    example="PersonaGenerator(model=..., base_url=...)",
    error=GeneratorError,
    logger="evalkit.personas.generator",
)


@dataclass(frozen=True, slots=True)
class GeneratorOptions:
    """``timeout``: total seconds of one call; ``max_attempts``: calls per batch at most
    (malformed answers and failed calls alike); ``max_response_bytes``: the most of an answer
    read; ``temperature``; ``retry``: waits between failed calls; ``cache_dir``: answers kept
    on disk by content (None: no cache)."""

    timeout: float = 120.0
    max_attempts: int = 3
    max_response_bytes: int = 1 << 20
    temperature: float = 0.9
    retry: RetryPolicy | None = None
    cache_dir: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        check_call_options(self)

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy in use, making ``max_attempts`` attempts."""
        return call_policy(self)


@dataclass(frozen=True)
class GeneratedBatch:
    """One call's personas (each an unchecked mapping with the request's ``id``); ``calls``
    made (retries included), ``malformed`` answers, ``cached`` when the answer came from the
    cache, each failed attempt's ``reasons`` (the key scrubbed)."""

    entries: tuple[Mapping[str, Any], ...]
    calls: int = 0
    malformed: int = 0
    cached: bool = False
    reasons: tuple[str, ...] = field(default_factory=tuple)


class PersonaSource(Protocol):
    """What the persona flows ask for personas: :class:`PersonaGenerator`, or any object with
    ``agenerate(request) -> GeneratedBatch`` and ``describe() -> dict``."""

    async def agenerate(self, request: GenerationRequest) -> GeneratedBatch: ...

    def describe(self) -> dict[str, Any]: ...


class PersonaGenerator(ChatClient):
    """Caller personas from an OpenAI-compatible endpoint (module docstring).

    What is not given comes from ``EVALKIT_GENERATOR_MODEL``, ``EVALKIT_GENERATOR_BASE_URL``
    and ``EVALKIT_GENERATOR_API_KEY`` (the key is optional); ``evalkit emulator`` prints an
    emulated generator's settings (model ``emulator-generator``).
    """

    prompt_version = GENERATOR_PROMPT_VERSION

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        options: GeneratorOptions | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.options = options or GeneratorOptions()
        self._endpoint = ChatEndpoint(
            model,
            base_url,
            api_key,
            env=GENERATOR_ENV,
            limits=self.options,
            response_format=False,
            http_client=http_client,
        )

    async def agenerate(self, request: GenerationRequest) -> GeneratedBatch:
        """The batch's personas (never raises for a malformed answer: it is counted)."""
        messages = build_messages(request)
        path = self._cache_path(messages)
        if path is not None and path.exists():
            try:
                found = read_personas(path.read_text(encoding="utf-8"))
                return GeneratedBatch(tuple(found), 0, 0, cached=True)
            except (OSError, MalformedAnswer):
                pass  # an unreadable entry is a miss
        async with self._endpoint.connections(1) as free:
            answer = await self._endpoint.aask(
                free.get_nowait(),
                ChatRequest(messages, self.options.temperature),
                lambda content: (content, read_personas(content)),
            )
        if answer.value is not None:
            content, found = answer.value
            if path is not None:
                body = content.encode("utf-8", "backslashreplace")  # a lone surrogate too
                await asyncio.to_thread(atomic_write_bytes, path, body)
            return GeneratedBatch(tuple(found), answer.calls, answer.malformed)
        logger.warning(
            "persona generator gave no usable answer in %d call(s) (last: %s); the batch's "
            "personas are dropped",
            answer.calls,
            answer.reason or "the endpoint is down",
        )
        return GeneratedBatch((), answer.calls, answer.malformed, reasons=answer.reasons)


def entry_text(entry: Mapping[str, Any], key: str) -> str | None:
    """An entry's text field, or None when it is missing or not text."""
    value = entry.get(key)
    return value if isinstance(value, str) else None
