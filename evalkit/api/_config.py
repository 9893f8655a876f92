"""Where a client's base URL, API key and HTTP settings come from."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, SupportsIndex
from urllib.parse import SplitResult, urlsplit

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
    """A string that never shows itself in a repr, str, format or pickle.

    Pickling refuses (:class:`TypeError`): a pickle is a file, and the key is never written to
    disk. Copies share the one immutable value.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise TypeError(
            "an API key (Secret) is never pickled; pass base_url and read the key from "
            f"{API_KEY_ENV} in the other process"
        )

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self

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
    """Arguments first, then ``EVALKIT_BASE_URL`` / ``EVALKIT_API_KEY``.

    The key is wrapped in a :class:`Secret` before anything else, so no frame of a failed
    construction holds it in clear. A base URL with ``user:password@`` is refused.
    """
    given = api_key is not None
    key = as_secret(api_key)
    del api_key
    env = os.environ if environ is None else environ
    url = base_url or env.get(BASE_URL_ENV)
    if not url:
        raise ConfigurationError(
            f"no base URL: pass base_url= or set {BASE_URL_ENV} (it ends with /v1; "
            "`evalkit emulator` prints one for a local emulator)"
        )
    url = url.rstrip("/")
    parts = _split_url(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(f"base_url must be an http(s) URL ending with /v1, got {url!r}")
    if not parts.path.endswith("/v1"):
        raise ConfigurationError(f"base_url must end with the version segment /v1, got {url!r}")
    if not given:
        key = as_secret(env.get(API_KEY_ENV))
    if key is not None and not key.reveal():
        key = None  # an empty key is no key
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


def as_secret(value: str | Secret | None) -> Secret | None:
    """``value`` as a stripped :class:`Secret` (``None`` stays ``None``).

    Constructors call it first thing, so a key never sits in clear in a frame's locals.
    """
    if value is None or isinstance(value, Secret):
        return value
    return Secret(value.strip())


def _split_url(url: str) -> SplitResult:
    """``url``'s parts; refuses credentials in the URL without ever showing them."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ConfigurationError(f"base_url is not a valid URL ({exc})") from None
    if "@" in parts.netloc:
        shown = f"{parts.scheme}://…@{parts.netloc.rpartition('@')[2]}{parts.path}"
        raise ConfigurationError(
            f"base_url must not carry credentials (a name or password before @), got {shown}; the service "
            f"authenticates with the API key: pass api_key= or set {API_KEY_ENV}"
        )
    return parts
