"""Who is calling: project API keys (401), and access to another project's resources (403)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ..api import API_KEY_PREFIX
from ._core import Emulator
from ._errors import assistant_not_found, contact_list_not_found, forbidden, unauthorized
from ._ids import mask_key
from ._records import AssistantRecord, Project


def bearer_key(request: Request) -> str | None:
    """The `Authorization: Bearer sk_api_...` key, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(API_KEY_PREFIX):
        return None
    return token


def authenticate(emu: Emulator, request: Request) -> tuple[Project, str]:
    """The caller's project and masked identity; 401 `invalid authorization` otherwise."""
    key = bearer_key(request)
    project = emu.state.project_for_key(key) if key is not None else None
    if key is None or project is None:
        raise unauthorized()
    return project, mask_key(key)


def owned_assistant(emu: Emulator, project: Project, assistant_id: str) -> AssistantRecord:
    """A live assistant of the caller's project: 404 when unknown, 403 when another's."""
    rec = emu.state.get_assistant(assistant_id)
    if rec is None:
        raise assistant_not_found(assistant_id)
    if rec.project_id != project.project_id:
        raise forbidden()
    return rec


def owned_contact_list(emu: Emulator, project: Project, list_id: str) -> dict[str, Any]:
    """A contact list of the caller's project: 404 when unknown, 403 when another's."""
    doc = emu.state.contact_lists.get(list_id)
    if doc is None:
        raise contact_list_not_found(list_id)
    if doc.get("projectId") != project.project_id:
        raise forbidden()
    return doc
