"""The admin API under /_emulator/: things the real service does elsewhere (a portal, a
build pipeline, billing) or never (fault injection), for tests and demos.

Authenticated by a project key, except ``POST /_emulator/projects``. Bodies are camelCase.
Each handler's docstring says what it takes and answers; the routes are ``ADMIN_ROUTES`` in
``_app`` (the docs site's admin-API page is generated from both).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import Problem
from ._auth import authenticate, owned_assistant
from ._bodies import read_json
from ._builds import check_build_body, create_built_assistant
from ._core import Emulator
from ._errors import api_error, forbidden, raise_for_problems
from ._faults import check_faults_body, faults_from_body

SOURCE_KINDS = ("csv_upload", "paste", "google_sheets", "customer_api")
EXCLUDED_KEYS = ("invalidPhone", "missingName", "duplicate", "dnc", "recentlyCalled")


async def _body(emu: Emulator, request: Request) -> Any:
    return await read_json(request, emu.settings.max_body_bytes)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _require_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise_for_problems([Problem("body", "must be an object")])
    assert isinstance(body, Mapping)
    return body


async def create_project(emu: Emulator, request: Request) -> Response:
    """Create a project: ``{organizationId?}`` answers ``{organizationId, projectId, apiKey}``
    (201). A given ``organizationId`` shares that organization's credits. No key needed."""
    body = _require_object(await _body(emu, request))
    org = body.get("organizationId")
    if org is not None and (not isinstance(org, str) or not org or len(org) > 64):
        raise_for_problems([Problem("organizationId", "must be a non-empty string")])
    project, key = emu.state.create_project(organization_id=org)
    out = {"organizationId": project.organization_id, "projectId": project.project_id}
    return JSONResponse({**out, "apiKey": key}, status_code=201)


async def whoami(emu: Emulator, request: Request) -> Response:
    """The caller's ``{organizationId, projectId}``."""
    project, _ = authenticate(emu, request)
    return JSONResponse(
        {"organizationId": project.organization_id, "projectId": project.project_id}
    )


def _readable(body: Mapping[str, Any], *, required: bool) -> bool | None:
    if "readable" not in body:
        if required:
            raise_for_problems([Problem("readable", "is required")])
        return None
    if not isinstance(body["readable"], bool):
        raise_for_problems([Problem("readable", "must be a boolean")])
    return bool(body["readable"])


async def publish(emu: Emulator, request: Request) -> Response:
    """Point prod at the current draft: ``{readable?}`` answers the assistant's metadata (E5)
    with ``readable``."""
    project, by = authenticate(emu, request)
    body = _require_object(await _body(emu, request))
    readable = _readable(body, required=False)
    rec = owned_assistant(emu, project, str(request.path_params["assistant_id"]))
    emu.state.publish(rec, by=by, readable=readable)
    return JSONResponse({**rec.metadata_json(), "readable": rec.readable})


async def set_readable(emu: Emulator, request: Request) -> Response:
    """``{readable}``: hold the published version unreadable (the public session, E8, then
    answers 503) or release it; answers the metadata (E5) with ``readable``."""
    project, _ = authenticate(emu, request)
    body = _require_object(await _body(emu, request))
    readable = _readable(body, required=True)
    rec = owned_assistant(emu, project, str(request.path_params["assistant_id"]))
    emu.state.set_readable(rec, bool(readable))
    return JSONResponse({**rec.metadata_json(), "readable": rec.readable})


async def list_versions(emu: Emulator, request: Request) -> Response:
    """Every saved version of the assistant: ``[{version, name, description?, config, savedAt,
    savedBy}]``."""
    project, _ = authenticate(emu, request)
    rec = owned_assistant(emu, project, str(request.path_params["assistant_id"]))
    versions = [
        {
            "version": v.version,
            "name": v.name,
            **({"description": v.description} if v.description is not None else {}),
            "config": v.config,
            "savedAt": v.saved_at,
            "savedBy": v.saved_by,
        }
        for v in rec.versions
    ]
    return JSONResponse(versions)


async def create_build(emu: Emulator, request: Request) -> Response:
    """Build an assistant from a brief: ``{name, brief: {context, sampleRows}, instructions,
    initialGreeting?, config?, description?, public?}`` answers the built assistant with its
    ``buildId`` (201)."""
    project, by = authenticate(emu, request)
    body = await _body(emu, request)
    raise_for_problems(check_build_body(body))
    rec, build = create_built_assistant(emu, project, body, by)
    return JSONResponse({**rec.to_json(), "buildId": build.build_id}, status_code=201)


async def get_build(emu: Emulator, request: Request) -> Response:
    """A build: ``{buildId, assistantId, status, createdAt, ...}``."""
    project, _ = authenticate(emu, request)
    build_id = str(request.path_params["build_id"])
    build = emu.state.builds.get(build_id)
    if build is None:
        raise api_error(404, f"Build not found: {build_id}")
    if build.project_id != project.project_id:
        raise forbidden()
    return JSONResponse(build.to_json())


def check_contact_list_body(body: Any) -> list[Problem]:
    """A contact list without its ids and timestamps."""
    if not isinstance(body, Mapping):
        return [Problem("body", "must be an object")]
    problems: list[Problem] = []
    if not isinstance(body.get("name"), str) or not body["name"]:
        problems.append(Problem("name", "is required and must be a non-empty string"))
    if body.get("sourceKind") not in SOURCE_KINDS:
        problems.append(Problem("sourceKind", f"must be one of {', '.join(SOURCE_KINDS)}"))
    summary = body.get("summary")
    if not isinstance(summary, Mapping):
        problems.append(Problem("summary", "is required and must be an object"))
        return problems
    will: Any = summary.get("willBeCalled")
    if not _is_int(will) or will < 0:
        problems.append(Problem("summary.willBeCalled", "must be an integer >= 0"))
    excluded = summary.get("excluded")
    if excluded is not None:
        if not isinstance(excluded, Mapping):
            problems.append(Problem("summary.excluded", "must be an object"))
        else:
            for key, value in excluded.items():
                if not _is_int(value) or value < 0:
                    problems.append(Problem(f"summary.excluded.{key}", "must be an integer >= 0"))
    errors = summary.get("errors")
    if errors is not None:
        if not isinstance(errors, list):
            problems.append(Problem("summary.errors", "must be an array"))
        else:
            for i, row in enumerate(errors):
                ok = (
                    isinstance(row, Mapping)
                    and _is_int(row.get("row"))
                    and isinstance(row.get("issue"), str)
                    and isinstance(row.get("value", ""), str)
                )
                if not ok:
                    problems.append(
                        Problem(f"summary.errors[{i}]", "must be {row: integer, issue, value}")
                    )
    count = body.get("contactCount")
    if count is not None and (not _is_int(count) or count != will):
        problems.append(Problem("contactCount", "must equal summary.willBeCalled"))
    return problems


async def create_contact_list(emu: Emulator, request: Request) -> Response:
    """Store a contact list (what E13 reads): the list without its ids and timestamps,
    ``{name, sourceKind, summary: {willBeCalled, excluded?, errors?}, contactCount?}``;
    answers the stored list (201)."""
    project, _ = authenticate(emu, request)
    body = await _body(emu, request)
    raise_for_problems(check_contact_list_body(body))
    doc = dict(body)
    if "contactCount" not in doc:
        doc["contactCount"] = body["summary"]["willBeCalled"]
    return JSONResponse(emu.state.add_contact_list(project, doc), status_code=201)


async def faults(emu: Emulator, request: Request) -> Response:
    """The project's fault injection, ``{dropRate, errorEventRate, http429Rate, http503Rate,
    seed}``: simulate streams dropped or ended by an ``error`` event, 429 and 503 answers. A PUT
    replaces all."""
    project, _ = authenticate(emu, request)
    if request.method == "PUT":
        body = await _body(emu, request)
        raise_for_problems(check_faults_body(body))
        emu.faults.set(project.project_id, faults_from_body(body))
    return JSONResponse(emu.faults.get(project.project_id).to_json())


async def credits(emu: Emulator, request: Request) -> Response:
    """``{credits}`` of the caller's organization (null: unlimited, the default; a public
    session, E8, spends one). A PUT sets it."""
    project, _ = authenticate(emu, request)
    if request.method == "PUT":
        body = _require_object(await _body(emu, request))
        value = body.get("credits")
        ok = value is None or (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        )
        if "credits" not in body or not ok:
            raise_for_problems([Problem("credits", "is required: a number >= 0 or null")])
        emu.state.set_credits(project.organization_id, value)
    return JSONResponse({"credits": emu.state.credits(project.organization_id)})


async def synthesis_limit(emu: Emulator, request: Request) -> Response:
    """``{requestsPerMinute}`` that text to speech and phrase replacements (E11, E12) allow
    per project (null: no cap). A PUT sets it."""
    authenticate(emu, request)
    limiter = emu.synthesis_limiter
    if request.method == "PUT":
        body = _require_object(await _body(emu, request))
        value = body.get("requestsPerMinute")
        if "requestsPerMinute" not in body or not (
            value is None or (_is_int(value) and value >= 1)
        ):
            raise_for_problems([Problem("requestsPerMinute", "must be an integer >= 1 or null")])
        limiter.limit = value
    return JSONResponse({"requestsPerMinute": limiter.limit})


async def stats(emu: Emulator, request: Request) -> Response:
    """Counters: ``{started, completed, cancelled, active, errored, dropped, judgeCalls,
    judgeMalformed, proposerCalls, proposerMalformed, unhandledErrors}``."""
    authenticate(emu, request)
    return JSONResponse(
        {
            **emu.stats.to_json(),
            **emu.judge.stats(),
            **emu.proposer.stats(),
            "unhandledErrors": emu.last_resort.count,
        }
    )
