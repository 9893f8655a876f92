"""What every client of a :class:`ChatEndpoint` shares (the proposer, the persona generator):
its options' checks and retry policy, and a shell that holds the endpoint (model, base URL,
a repr and a pickle without the key, a content-addressed answer cache path)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from .._util import content_hash
from ..api import RetryPolicy
from ._endpoint import ChatEndpoint

__all__ = ["CallOptions", "ChatClient", "call_policy", "check_call_options"]


class CallOptions(Protocol):
    """The knobs of one client's calls (``ProposerOptions``, ``GeneratorOptions``)."""

    @property
    def timeout(self) -> float: ...
    @property
    def max_attempts(self) -> int: ...
    @property
    def max_response_bytes(self) -> int: ...
    @property
    def temperature(self) -> float: ...
    @property
    def retry(self) -> RetryPolicy | None: ...
    @property
    def cache_dir(self) -> str | os.PathLike[str] | None: ...


def check_call_options(options: CallOptions) -> None:
    """Refuse a knob out of range, naming the options class and the field."""
    name = type(options).__name__
    if not options.timeout > 0:
        raise ValueError(f"{name}.timeout must be positive, got {options.timeout}")
    if options.max_attempts < 1:
        raise ValueError(f"{name}.max_attempts must be at least 1, got {options.max_attempts}")
    if options.max_response_bytes < 1:
        raise ValueError(f"{name}.max_response_bytes must be at least 1")
    if not 0.0 <= options.temperature <= 2.0:
        raise ValueError(f"{name}.temperature must be in [0, 2], got {options.temperature}")


def call_policy(options: CallOptions) -> RetryPolicy:
    """The retry policy in use, making ``options.max_attempts`` attempts."""
    if options.retry is None:
        return RetryPolicy(max_attempts=options.max_attempts)
    return replace(options.retry, max_attempts=options.max_attempts)


class ChatClient:
    """The shell of a client of one :class:`ChatEndpoint`: subclasses set ``_endpoint``,
    ``options`` and ``prompt_version``."""

    _endpoint: ChatEndpoint
    options: CallOptions
    prompt_version: ClassVar[str]

    @property
    def model(self) -> str:
        return self._endpoint.model

    @property
    def base_url(self) -> str:
        return self._endpoint.base_url

    def __repr__(self) -> str:
        key = "<set>" if self._endpoint.has_api_key else "None"
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # the endpoint pickles without its key (read from the environment again if it came
        # from there)
        return {"endpoint": self._endpoint, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._endpoint, self.options = state["endpoint"], state["options"]

    def describe(self) -> dict[str, Any]:
        """What a record keeps about this client (no key): ``{"kind": "llm", "model",
        "prompt_version"}``."""
        return {"kind": "llm", "model": self.model, "prompt_version": self.prompt_version}

    def _cache_path(self, messages: list[dict[str, str]]) -> Path | None:
        if self.options.cache_dir is None:
            return None
        key = content_hash([self.model, self.prompt_version, messages])
        return Path(self.options.cache_dir) / key[:2] / f"{key}.json"
