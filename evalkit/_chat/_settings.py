"""Where an endpoint's settings come from: arguments first, else the user's environment
variables (``EVALKIT_JUDGE_*``, ``EVALKIT_PROPOSER_*``). A trailing ``/chat/completions`` on
the base URL is dropped; the key is optional (a local endpoint may need none)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..api import ConfigurationError, Secret

__all__ = ["ChatEnv", "resolve_endpoint", "resolve_key"]


@dataclass(frozen=True, slots=True)
class ChatEnv:
    """Who uses an endpoint and where its settings come from, for lookups and messages.

    ``what``: ``"judge"``; ``options``: the options class whose fields set the limits
    (``"JudgeOptions"``); ``example``: how to pass the settings (``"Judge(model=...,
    base_url=...)"``); ``error``: what a missing or bad setting raises; ``logger``: where the
    endpoint says it looks down.
    """

    what: str
    model_env: str
    base_url_env: str
    api_key_env: str
    options: str
    example: str
    error: type[ConfigurationError]
    logger: str


def resolve_endpoint(model: str | None, base_url: str | None, env: ChatEnv) -> tuple[str, str]:
    """``(model, base_url)`` from the arguments, else the environment; ``env.error`` names
    every setting missing, or a base URL that is not http(s)."""
    name = (model or os.environ.get(env.model_env) or "").strip()
    url = (base_url or os.environ.get(env.base_url_env) or "").strip().rstrip("/")
    missing = [var for var, value in ((env.model_env, name), (env.base_url_env, url)) if not value]
    if missing:
        raise env.error(
            f"no {env.what} configured: set {' and '.join(missing)} (an OpenAI-compatible "
            f"endpoint such as http://host:port/v1 in {env.base_url_env}, its model name in "
            f"{env.model_env}, and {env.api_key_env} if it needs a key), or pass "
            f"{env.example}; `evalkit emulator` prints the settings of an emulated {env.what}"
        )
    url = url.removesuffix("/chat/completions")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise env.error(
            f"the {env.what} base URL must be an http(s) URL such as http://host:port/v1, "
            f"got {url!r}"
        )
    return name, url


def resolve_key(api_key: str | Secret | None, env: ChatEnv) -> tuple[Secret | None, bool]:
    """The key as a :class:`Secret` and whether it came from the environment."""
    if isinstance(api_key, Secret):
        return api_key, False
    if api_key is not None and api_key.strip():
        return Secret(api_key.strip()), False
    raw = (os.environ.get(env.api_key_env) or "").strip()
    return (Secret(raw), True) if raw else (None, False)
