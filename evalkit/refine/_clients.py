"""One async client for the work, whichever client the caller handed in."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ..api import Assistant, AsyncClient, Client
from ._errors import RefineError

__all__ = ["AnyClient", "async_client", "find_assistant"]

AnyClient = Client | AsyncClient


@contextlib.asynccontextmanager
async def async_client(client: AnyClient | None) -> AsyncIterator[AsyncClient]:
    """``client`` itself when async; otherwise an async twin (or one from the environment),
    closed on exit."""
    if isinstance(client, AsyncClient):
        yield client
        return
    owned = AsyncClient.from_client(client) if isinstance(client, Client) else AsyncClient()
    try:
        yield owned
    finally:
        await owned.aclose()


async def find_assistant(client: AsyncClient, assistant_id: str) -> Assistant:
    """The assistant as E1 lists it (the only way to read its config), or a :class:`RefineError`."""
    assistants = await client.list_assistants()
    found = next((a for a in assistants if a.id == assistant_id), None)
    if found is None:
        raise RefineError(
            f"assistant {assistant_id} is not among the {len(assistants)} assistant(s) of this "
            "API key's project (E1); check the id and EVALKIT_API_KEY"
        )
    return found
