"""The client every command uses: configured from the environment, quick to give up on a
refused connection (a CLI user waiting ten seconds for "connection refused" learns nothing)."""

from __future__ import annotations

import random
from typing import Final

import httpx

from ..api import Client, RetryPolicy

__all__ = ["CliRetryPolicy", "cli_client"]

#: Longest wait between two attempts to connect; 4 attempts give up within about 2 s.
CONNECT_MAX_WAIT: Final = 1.0


class CliRetryPolicy(RetryPolicy):
    """The default policy, except that connect errors back off from 0.25 s up to 1 s."""

    def wait_for(self, attempt: int, error: BaseException, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt``."""
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return float(min(CONNECT_MAX_WAIT, 0.25 * 2 ** (attempt - 1)))
        return super().wait_for(attempt, error, rng)


def cli_client() -> Client:
    """A :class:`~evalkit.Client` from ``EVALKIT_BASE_URL`` and ``EVALKIT_API_KEY``."""
    return Client(retry=CliRetryPolicy())
