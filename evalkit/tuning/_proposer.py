"""Proposer: candidate prompts from any OpenAI-compatible chat-completions endpoint.

One call per round asks for ``candidates`` prompts (:mod:`._proposer_prompt`, a versioned
template) over the judge's HTTP stack (:mod:`evalkit.grading._judge_http`): a total deadline
per call, a bounded read of the answer, the project's retry policy for failed calls. An
answer that is not the JSON asked for (prose, a broken object) is asked again, up to
``options.max_attempts`` calls; then the round's proposals are dropped and counted. Entries
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
from pathlib import Path
from typing import Any, Final

import httpx

from .._util import atomic_write_bytes, content_hash, redact_text
from ..api import ApiError, ConfigurationError, RetryPolicy
from ..api._config import Secret
from ..grading._judge_http import (
    CallDeadlineExceeded,
    content_of,
    post_chat,
    retryable,
)
from ..grading._judge_parse import MalformedAnswer, extract_json_object
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
        if not self.timeout > 0:
            raise ValueError(f"ProposerOptions.timeout must be positive, got {self.timeout}")
        if self.max_attempts < 1:
            raise ValueError(
                f"ProposerOptions.max_attempts must be at least 1, got {self.max_attempts}"
            )
        if self.max_response_bytes < 1:
            raise ValueError("ProposerOptions.max_response_bytes must be at least 1")

    @property
    def policy(self) -> RetryPolicy:
        return self.retry if self.retry is not None else RetryPolicy(max_attempts=self.max_attempts)


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


class Proposer:
    """Candidate prompts from an OpenAI-compatible endpoint (module docstring).

    What is not given comes from ``EVALKIT_PROPOSER_MODEL``, ``EVALKIT_PROPOSER_BASE_URL`` and
    ``EVALKIT_PROPOSER_API_KEY`` (the key is optional); ``evalkit emulator`` prints an emulated
    proposer's settings (model ``emulator-proposer``).
    """

    prompt_version: Final = PROPOSER_PROMPT_VERSION

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | Secret | None = None,
        *,
        options: ProposerOptions | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        env = os.environ
        self._model = (model or env.get(MODEL_ENV) or "").strip()
        url = (base_url or env.get(BASE_URL_ENV) or "").strip().rstrip("/")
        if not self._model or not url:
            missing = [n for n, v in ((MODEL_ENV, self._model), (BASE_URL_ENV, url)) if not v]
            raise ProposerError(
                f"no proposer configured: set {' and '.join(missing)} or pass "
                "Proposer(model=..., base_url=...) (an OpenAI-compatible endpoint such as "
                "http://host:port/v1); `evalkit emulator` prints an emulated one"
            )
        url = url.removesuffix("/chat/completions")
        if not url.startswith(("http://", "https://")):
            raise ProposerError(f"the proposer base URL must be an http(s) URL, got {url!r}")
        self._base_url = url
        self._key_from_env = api_key is None and bool(env.get(API_KEY_ENV))
        raw = api_key if api_key is not None else env.get(API_KEY_ENV)
        self._api_key: Secret | None = (
            raw if isinstance(raw, Secret) else (Secret(raw) if raw else None)
        )
        self.options = options or ProposerOptions()
        self._http_client = http_client
        self._rng = self.options.policy.rng()

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return self._base_url

    def __repr__(self) -> str:
        key = "<set>" if self._api_key is not None else "None"
        return f"Proposer(model={self._model!r}, base_url={self._base_url!r}, api_key={key})"

    def __getstate__(self) -> dict[str, Any]:
        return {
            "model": self._model,
            "base_url": self._base_url,
            "key_from_env": self._key_from_env,
            "options": self.options,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._model, self._base_url = state["model"], state["base_url"]
        self._key_from_env = state["key_from_env"]
        raw = os.environ.get(API_KEY_ENV) if self._key_from_env else None
        self._api_key = Secret(raw) if raw else None
        self.options = state["options"]
        self._http_client = None
        self._rng = self.options.policy.rng()

    def describe(self) -> dict[str, Any]:
        """What a record of the optimisation keeps about the proposer (no key)."""
        return {"kind": "llm", "model": self._model, "prompt_version": self.prompt_version}

    def _clean(self, text: str) -> str:
        if self._api_key is not None and self._api_key.reveal():
            text = text.replace(self._api_key.reveal(), "***")
        return redact_text(text)

    def _cache_path(self, messages: list[dict[str, str]]) -> Path | None:
        if self.options.cache_dir is None:
            return None
        key = content_hash([self._model, self.prompt_version, messages])
        return Path(self.options.cache_dir) / key[:2] / f"{key}.json"

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
        calls, malformed, reasons = 0, 0, []
        client = self._http_client or httpx.AsyncClient(timeout=self.options.timeout + 1.0)
        try:
            while calls < self.options.max_attempts:
                calls += 1
                try:
                    content = await self._call(client, messages)
                    found, dropped = _entries(content)
                except MalformedAnswer as exc:
                    malformed += 1
                    reasons.append(f"malformed answer: {exc}")
                    logger.info("proposer answer malformed (call %d): %s", calls, exc)
                    continue
                except (ApiError, httpx.HTTPError, CallDeadlineExceeded) as exc:
                    reason = self._clean(f"{type(exc).__name__}: {exc}")
                    reasons.append(reason)
                    logger.warning("proposer call %d failed: %s", calls, reason)
                    if calls >= self.options.max_attempts or not retryable(exc):
                        break
                    policy = self.options.policy
                    await policy.async_sleep(policy.wait_for(calls, exc, self._rng))
                    continue
                if path is not None:
                    body = content.encode("utf-8", "backslashreplace")  # a lone surrogate too
                    await asyncio.to_thread(atomic_write_bytes, path, body)
                return ProposalBatch(tuple(found), calls, malformed + dropped)
        finally:
            if self._http_client is None:
                await client.aclose()
        logger.warning("proposer gave no usable answer in %d call(s); round goes on", calls)
        return ProposalBatch((), calls, malformed, reasons=tuple(reasons))

    async def _call(self, http: httpx.AsyncClient, messages: list[dict[str, str]]) -> str:
        body = {
            "model": self._model,
            "messages": messages,
            "temperature": self.options.temperature,
        }
        response = await post_chat(
            http,
            self._base_url,
            body,
            api_key=self._api_key,
            deadline=self.options.timeout,
            max_bytes=self.options.max_response_bytes,
        )
        content, _ = content_of(response)
        return content
