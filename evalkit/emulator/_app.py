"""The ASGI application: /v1 (the service), /_emulator (admin), /rtc/validate (tokens)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from . import _admin, _judge, _proposer, _simulate, _synthesis, _v1
from ._builds import settle_builds
from ._core import Emulator
from ._errors import ApiHttpError, handle_api_error, handle_http_exception
from ._openapi import openapi_document
from ._sessions import validate_token
from ._settings import EmulatorSettings
from .dialogue import DialogueBackend

Handler = Callable[[Emulator, Request], Awaitable[Response]]


def _routes(emu: Emulator, table: list[tuple[str, Handler, list[str]]]) -> list[BaseRoute]:
    """One route per path, dispatching by method, so a 405's ``Allow`` lists every method.

    An unexpected exception is answered here (500, ``Connection: close``) rather than
    re-raised into the server, which would leave a keep-alive connection in doubt.
    """
    by_path: dict[str, dict[str, Handler]] = {}
    for path, handler, methods in table:
        for method in methods:
            by_path.setdefault(path, {})[method] = handler
    return [_route(emu, path, handlers) for path, handlers in by_path.items()]


def _route(emu: Emulator, path: str, handlers: dict[str, Handler]) -> Route:
    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        try:
            settle_builds(emu)
            return await handlers[method](emu, request)
        except (ApiHttpError, HTTPException):
            raise
        except Exception as exc:
            return await emu.last_resort(request, exc)

    return Route(path, endpoint, methods=list(handlers))


def _v1_routes(emu: Emulator) -> list[BaseRoute]:
    ra = "/realtime-assistants"
    table: list[tuple[str, Handler, list[str]]] = [
        (ra, _v1.list_assistants, ["GET"]),
        (ra, _v1.create_assistant, ["POST"]),
        (ra + "/builds/{assistant_id}/simulate", _simulate.simulate, ["POST"]),
        (ra + "/builds/{assistant_id}/refine", _v1.refine, ["POST"]),
        (ra + "/{assistant_id}", _v1.update_assistant, ["POST"]),
        (ra + "/{assistant_id}", _v1.delete_assistant, ["DELETE"]),
        (ra + "/{assistant_id}/metadata", _v1.get_metadata, ["GET"]),
        (ra + "/{assistant_id}/createSession", _v1.create_session, ["POST"]),
        (ra + "/{assistant_id}/createPublicSession", _v1.create_public_session, ["POST"]),
        (ra + "/{assistant_id}/public-session", _v1.open_public_session, ["POST"]),
        ("/synthesis/text-to-speech", _synthesis.text_to_speech, ["POST"]),
        ("/synthesis/phrase-replacement-config", _synthesis.create_phrase_config, ["POST"]),
        ("/contact-lists/{list_id}", _v1.get_contact_list, ["GET"]),
    ]
    routes = _routes(emu, table)

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document(str(request.base_url).rstrip("/") + "/v1"))

    routes.append(Route("/openapi.json", openapi, methods=["GET"]))
    return routes


#: The admin API under ``/_emulator`` (path, handler, methods); each handler's docstring says
#: what it takes and answers.
ADMIN_ROUTES: Final[tuple[tuple[str, Handler, tuple[str, ...]], ...]] = (
    ("/projects", _admin.create_project, ("POST",)),
    ("/projects/me", _admin.whoami, ("GET",)),
    ("/assistants/{assistant_id}/publish", _admin.publish, ("POST",)),
    ("/assistants/{assistant_id}/readable", _admin.set_readable, ("PUT",)),
    ("/assistants/{assistant_id}/versions", _admin.list_versions, ("GET",)),
    ("/builds", _admin.create_build, ("POST",)),
    ("/builds/{build_id}", _admin.get_build, ("GET",)),
    ("/contact-lists", _admin.create_contact_list, ("POST",)),
    ("/faults", _admin.faults, ("GET", "PUT")),
    ("/credits", _admin.credits, ("GET", "PUT")),
    ("/synthesis-limit", _admin.synthesis_limit, ("GET", "PUT")),
    ("/stats", _admin.stats, ("GET",)),
    ("/judge", _judge.judge_settings, ("GET", "PUT")),
    ("/judge/v1/chat/completions", _judge.chat_completions, ("POST",)),
    ("/judge/v1/models", _judge.models, ("GET",)),
    ("/proposer", _proposer.proposer_settings, ("GET", "PUT")),
    ("/proposer/v1/chat/completions", _proposer.chat_completions, ("POST",)),
    ("/proposer/v1/models", _proposer.models, ("GET",)),
)


def _admin_routes(emu: Emulator) -> list[BaseRoute]:
    return _routes(emu, [(path, handler, list(methods)) for path, handler, methods in ADMIN_ROUTES])


def build_app(emu: Emulator) -> Starlette:
    """The Starlette app serving ``emu`` (``app.state.emulator`` holds it)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        emu.loop = asyncio.get_running_loop()
        try:
            yield
        finally:
            emu.close_streams()

    async def index(request: Request) -> Response:
        return JSONResponse(
            {"service": "evalkit emulator", "baseUrl": str(request.base_url) + "v1"}
        )

    async def rtc_validate(request: Request) -> Response:
        return await validate_token(emu, request)

    routes: list[BaseRoute] = [
        Route("/", index, methods=["GET"]),
        Mount("/v1", routes=_v1_routes(emu)),
        Mount("/_emulator", routes=_admin_routes(emu)),
        Route("/rtc/validate", rtc_validate, methods=["GET"]),
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        ApiHttpError: handle_api_error,
        HTTPException: handle_http_exception,
        Exception: emu.last_resort,
    }
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.emulator = emu
    return app


def create_app(
    api_key: str | None = None,
    *,
    time_scale: float = 1.0,
    seed: int | None = None,
    turn_delay: float = 0.0,
    db: str | Path | None = None,
    backend: DialogueBackend | None = None,
    settings: EmulatorSettings | None = None,
) -> Starlette:
    """An emulator as an ASGI app for embedding; ``app.state.emulator.api_key`` is its key.

    ``settings`` (when given) wins over ``time_scale``, ``seed`` and ``turn_delay``.
    """
    settings = settings or EmulatorSettings(time_scale=time_scale, seed=seed, turn_delay=turn_delay)
    emu = Emulator(settings, api_key=api_key, db=db, backend=backend)
    return build_app(emu)
