"""One async client for the work, whichever client the caller handed in (the api's
:func:`~evalkit.api._any_client.async_client`), and the assistant it lists."""

from __future__ import annotations

from ..api import AnyClient, Assistant, AsyncClient, async_client
from ._errors import RefineError

__all__ = ["AnyClient", "async_client", "find_assistant"]


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
