"""Where a judge's model, endpoint and key come from, its options, and its counters."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from ..api import ConfigurationError, RetryPolicy

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "MODEL_ENV",
    "JudgeNotConfigured",
    "JudgeOptions",
    "JudgeStats",
    "resolve_endpoint",
]

MODEL_ENV: Final = "EVALKIT_JUDGE_MODEL"
BASE_URL_ENV: Final = "EVALKIT_JUDGE_BASE_URL"
API_KEY_ENV: Final = "EVALKIT_JUDGE_API_KEY"


class JudgeNotConfigured(ConfigurationError):
    """No judge model or endpoint was given, by argument or environment."""


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """How a :class:`~evalkit.grading.Judge` calls its endpoint.

    ``max_attempts`` bounds the calls per task (malformed answers and failed calls alike);
    ``retry`` is the project's retry policy, used for the waits between failed calls (backoff,
    ``Retry-After``) and for which transport errors are worth another try; its own
    ``max_attempts`` is not used. ``use_response_format``: ``"auto"`` asks for a JSON schema and
    falls back to plain JSON when the endpoint answers 400 to it; ``True`` always asks;
    ``False`` never does. ``timeout`` is per call, in seconds.
    """

    concurrency: int = 16
    max_attempts: int = 3
    timeout: float = 120.0
    temperature: float = 0.0
    use_response_format: Literal["auto"] | bool = "auto"
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.timeout <= 0:
            raise ValueError(f"timeout must be positive, got {self.timeout}")
        if self.use_response_format not in ("auto", True, False):
            raise ValueError(
                f"use_response_format must be 'auto', True or False, got {self.use_response_format!r}"
            )


@dataclass(frozen=True, slots=True)
class JudgeStats:
    """A snapshot of a judge's counters.

    ``calls``: HTTP requests sent (retries included); ``cache_hits``: rule verdicts read from
    the cache; ``errors``: rule verdicts that ended as ``error``; tokens as the endpoint reported.
    """

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def resolve_endpoint(
    model: str | None, base_url: str | None, environ: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """``(model, base_url)`` from the arguments, else ``EVALKIT_JUDGE_MODEL`` and
    ``EVALKIT_JUDGE_BASE_URL``; :class:`JudgeNotConfigured` names every setting missing.

    A trailing ``/chat/completions`` on the base URL is dropped.
    """
    env = os.environ if environ is None else environ
    name = (model or env.get(MODEL_ENV) or "").strip()
    url = (base_url or env.get(BASE_URL_ENV) or "").strip().rstrip("/")
    missing = [var for var, value in ((MODEL_ENV, name), (BASE_URL_ENV, url)) if not value]
    if missing:
        what = " and ".join(missing)
        raise JudgeNotConfigured(
            f"no LLM judge configured: set {what} (an OpenAI-compatible endpoint such as "
            f"http://host:port/v1 in {BASE_URL_ENV}, its model name in {MODEL_ENV}, and "
            f"{API_KEY_ENV} if it needs a key), or pass Judge(model=..., base_url=...); "
            "`evalkit emulator` prints the settings of an emulated judge"
        )
    url = url.removesuffix("/chat/completions")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise JudgeNotConfigured(
            f"the judge base URL must be an http(s) URL such as http://host:port/v1, got {url!r}"
        )
    return name, url
