"""The /v1 operations other than simulate and synthesis: assistants (E1–E5), sessions
(E6–E8), refine (E10) and contact lists (E13).

Order of checks: authentication (401), body validation (400), lookup (404), access (403),
then the operation's own conditions. Status codes the spec leaves "not shown": E2 answers
201, E3 answers 200 with the saved assistant (with `version` and `aliases`).

Bodies are required (an empty one is a 400) and checked by the request models that state
the spec's rules (the client checks the same ones before sending, and the OpenAPI document is
generated from them). A ``null`` optional field is an absent one (E3 leaves it unchanged); a
config is stored as sent, nulls and unknown keys kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import CreateAssistantBody, SessionBody, UpdateAssistantBody
from ._auth import authenticate, owned_assistant, owned_contact_list
from ._bodies import check_body, read_json
from ._builds import start_refine
from ._core import Emulator
from ._errors import (
    INSUFFICIENT_CREDITS,
    NO_BUILD_ARTIFACTS,
    NOT_PUBLIC,
    api_error,
    assistant_not_found,
    not_readable,
)
from ._records import AssistantRecord
from ._requests import EmulatorRefineBody
from ._sessions import mint_session


async def _body(emu: Emulator, request: Request) -> Any:
    return await read_json(request, emu.settings.max_body_bytes, required=True)


def _assistant_id(request: Request) -> str:
    return str(request.path_params["assistant_id"])


async def list_assistants(emu: Emulator, request: Request) -> Response:
    """E1: every assistant of the key's project, as its draft, with aliases."""
    project, _ = authenticate(emu, request)
    return JSONResponse([r.to_json() for r in emu.state.list_assistants(project.project_id)])


async def create_assistant(emu: Emulator, request: Request) -> Response:
    """E2: the created assistant (without version and aliases), 201."""
    project, by = authenticate(emu, request)
    body = await _body(emu, request)
    plain = check_body(body, CreateAssistantBody)
    rec = emu.state.create_assistant(
        project,
        name=plain["name"],
        description=plain.get("description"),
        config=body["config"],
        public=bool(plain.get("public", False)),
        by=by,
    )
    return JSONResponse(rec.to_json(with_version=False), status_code=201)


async def update_assistant(emu: Emulator, request: Request) -> Response:
    """E3: a save of the given fields (name, description, config, public); version bumps."""
    project, by = authenticate(emu, request)
    body = await _body(emu, request)
    plain = check_body(body, UpdateAssistantBody)
    rec = owned_assistant(emu, project, _assistant_id(request))
    changes = {k: body[k] for k in ("name", "description", "config", "public") if k in plain}
    emu.state.save_assistant(rec, by=by, **changes)
    return JSONResponse(rec.to_json())


async def delete_assistant(emu: Emulator, request: Request) -> Response:
    """E4: 204; new sessions are refused afterwards, issued credentials stay valid."""
    project, _ = authenticate(emu, request)
    rec = owned_assistant(emu, project, _assistant_id(request))
    emu.state.delete_assistant(rec)
    return Response(status_code=204)


async def get_metadata(emu: Emulator, request: Request) -> Response:
    """E5: publish state without config."""
    project, _ = authenticate(emu, request)
    rec = owned_assistant(emu, project, _assistant_id(request))
    return JSONResponse(rec.metadata_json())


def _session_body(body: Any) -> Any:
    return check_body(body, SessionBody)


def _session_args(body: Mapping[str, Any]) -> tuple[str, str | None]:
    room = body.get("roomName")
    return str(body["participantName"]), room if isinstance(room, str) else None


async def create_session(emu: Emulator, request: Request) -> Response:
    """E6: session credentials with an API key."""
    project, _ = authenticate(emu, request)
    body = _session_body(await _body(emu, request))
    rec = owned_assistant(emu, project, _assistant_id(request))
    name, room = _session_args(body)
    return JSONResponse(mint_session(emu, rec, request, name, room, append_session_id=False))


def _public_assistant(emu: Emulator, assistant_id: str) -> AssistantRecord:
    rec = emu.state.get_assistant(assistant_id)
    if rec is None:
        raise assistant_not_found(assistant_id)
    if not rec.public:
        raise api_error(403, NOT_PUBLIC)
    return rec


async def create_public_session(emu: Emulator, request: Request) -> Response:
    """E7: session credentials for a public assistant, no key."""
    body = _session_body(await _body(emu, request))
    rec = _public_assistant(emu, _assistant_id(request))
    name, room = _session_args(body)
    return JSONResponse(mint_session(emu, rec, request, name, room, append_session_id=False))


async def open_public_session(emu: Emulator, request: Request) -> Response:
    """E8: like E7, billed to the organization (one credit a session; 402 when none left),
    503 while the published version is held unreadable, a session id appended to roomName."""
    body = _session_body(await _body(emu, request))
    rec = _public_assistant(emu, _assistant_id(request))
    credits = emu.state.credits(rec.organization_id)
    if credits is not None and credits < 1:
        raise api_error(402, INSUFFICIENT_CREDITS)
    if not rec.readable:
        raise not_readable(rec.live.version, rec.assistant_id)
    if not emu.state.spend_credit(rec.organization_id):
        raise api_error(402, INSUFFICIENT_CREDITS)
    name, room = _session_args(body)
    return JSONResponse(mint_session(emu, rec, request, name, room, append_session_id=True))


async def refine(emu: Emulator, request: Request) -> Response:
    """E10: 200 {buildId, assistantId, status: started}; the outcome shows in the build poll.

    The optional brief replacement is accepted as ``brief`` (the spec does not show its name).
    """
    project, by = authenticate(emu, request)
    body = check_body(await _body(emu, request), EmulatorRefineBody)
    rec = owned_assistant(emu, project, _assistant_id(request))
    if rec.artifacts is None:
        raise api_error(404, NO_BUILD_ARTIFACTS)
    build = start_refine(emu, project, rec, body, by)
    return JSONResponse(
        {"buildId": build.build_id, "assistantId": rec.assistant_id, "status": "started"}
    )


async def get_contact_list(emu: Emulator, request: Request) -> Response:
    """E13: a contact list's metadata."""
    project, _ = authenticate(emu, request)
    return JSONResponse(owned_contact_list(emu, project, str(request.path_params["list_id"])))
