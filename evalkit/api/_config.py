"""Where a client's base URL, API key and HTTP settings come from."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from ._exceptions import ConfigurationError
from ._limits import API_KEY_PREFIX, KEEPALIVE_INTERVAL_S, SIMULATION_CEILING_S

BASE_URL_ENV = "EVALKIT_BASE_URL"
API_KEY_ENV = "EVALKIT_API_KEY"

logger = logging.getLogger("evalkit.api")

#: No read may time out before three keepalive intervals have passed without a byte.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=4 * KEEPALIVE_INTERVAL_S, write=30.0, pool=None)
#: Sized for hundreds of concurrent streams (the runner bounds concurrency itself).
DEFAULT_LIMITS = httpx.Limits(
    max_connections=1024, max_keepalive_connections=256, keepalive_expiry=30.0
)
#: A total deadline a little beyond the service's five-minute ceiling.
DEFAULT_STREAM_DEADLINE_S = SIMULATION_CEILING_S + 30.0


class Secret:
    """A string that never shows itself in a repr, str or format."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('sk_api_…')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """A client's resolved settings (the key is a :class:`Secret`)."""

    base_url: str
    api_key: Secret | None
    timeout: httpx.Timeout
    stream_deadline_s: float

    @property
    def host(self) -> str:
        """The base URL's host and port, safe to record in manifests."""
        return urlsplit(self.base_url).netloc


def resolve_settings(
    base_url: str | None,
    api_key: str | Secret | None,
    *,
    timeout: float | httpx.Timeout | None,
    stream_deadline_s: float | None,
    environ: Mapping[str, str] | None = None,
) -> ClientSettings:
    """Arguments first, then ``EVALKIT_BASE_URL`` / ``EVALKIT_API_KEY``."""
    env = os.environ if environ is None else environ
    url = base_url or env.get(BASE_URL_ENV)
    if not url:
        raise ConfigurationError(
            f"no base URL: pass base_url= or set {BASE_URL_ENV} (it ends with /v1; "
            "`evalkit emulator` prints one for a local emulator)"
        )
    url = url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(f"base_url must be an http(s) URL ending with /v1, got {url!r}")
    if not parts.path.endswith("/v1"):
        raise ConfigurationError(f"base_url must end with the version segment /v1, got {url!r}")
    key: Secret | None
    if isinstance(api_key, Secret):
        key = api_key
    else:
        raw = api_key if api_key is not None else env.get(API_KEY_ENV)
        key = Secret(raw.strip()) if raw else None
    if key is not None and not key.reveal().startswith(API_KEY_PREFIX):
        raise ConfigurationError(
            f"api_key must start with {API_KEY_PREFIX!r} (a project API key); the value given does not"
        )
    if timeout is None:
        resolved_timeout = DEFAULT_TIMEOUT
    elif isinstance(timeout, httpx.Timeout):
        resolved_timeout = timeout
    else:
        resolved_timeout = httpx.Timeout(
            timeout, read=max(float(timeout), 3 * KEEPALIVE_INTERVAL_S), pool=None
        )
    if resolved_timeout.read is not None and resolved_timeout.read < 3 * KEEPALIVE_INTERVAL_S:
        logger.warning(
            "timeout.read is %gs, under three 15 s keepalive intervals (%gs): a simulate stream "
            "against the real service can time out between pings",
            resolved_timeout.read,
            3 * KEEPALIVE_INTERVAL_S,
        )
    return ClientSettings(
        base_url=url,
        api_key=key,
        timeout=resolved_timeout,
        stream_deadline_s=DEFAULT_STREAM_DEADLINE_S
        if stream_deadline_s is None
        else stream_deadline_s,
    )
