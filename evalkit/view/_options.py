"""How the viewer runs: which store, where it listens, who may reach it, what it speaks with."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..api import Client
from ..store import StoreLike

__all__ = ["ViewerOptions", "is_loopback"]


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ViewerOptions:
    """The viewer's settings.

    ``store``: a folder or an fsspec URL (``storage_options`` for its filesystem). ``host``
    defaults to loopback; bound anywhere else the pages live under a random ``token`` path
    (``http://host:port/<token>/``) unless a token is given. ``client`` synthesizes played
    turns (default: a :class:`Client` from ``EVALKIT_BASE_URL``/``EVALKIT_API_KEY``, made when
    the first turn is played). ``refresh_s``: how often a page of a run still going reloads.
    """

    store: StoreLike = "runs"
    host: str = "127.0.0.1"
    port: int = 8788
    token: str | None = None
    client: Client | None = field(default=None, repr=False, compare=False)
    storage_options: Mapping[str, Any] | None = field(default=None, repr=False)
    refresh_s: float = 3.0
    page_size: int = 200

    def resolved(self) -> ViewerOptions:
        """These options with a token when the host is not loopback."""
        if self.token is None and not is_loopback(self.host):
            return replace(self, token=secrets.token_urlsafe(18))
        return self
