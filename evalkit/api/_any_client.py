"""One async client for async work, whichever client the caller handed in (the sync and async
twins of every flow take either)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ._async_client import AsyncClient
from ._client import Client

__all__ = ["AnyClient", "as_async_client", "async_client"]

AnyClient = Client | AsyncClient


def as_async_client(client: AnyClient | None) -> tuple[AsyncClient, bool]:
    """``client`` itself when async, else its async twin (or one configured from the
    environment), and whether the caller made it (and so closes it)."""
    if isinstance(client, AsyncClient):
        return client, False
    return (AsyncClient.from_client(client) if isinstance(client, Client) else AsyncClient()), True


@contextlib.asynccontextmanager
async def async_client(client: AnyClient | None) -> AsyncIterator[AsyncClient]:
    """:func:`as_async_client` as a context: the client made here is closed on exit."""
    aclient, owned = as_async_client(client)
    try:
        yield aclient
    finally:
        if owned:
            await aclient.aclose()
