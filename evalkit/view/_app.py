"""The live viewer: a Starlette app serving :class:`Pages` over one store, read-only except
for labels (``POST .../label``) and the audio cache (a played turn is synthesized once).

Bound to loopback it answers only requests addressed to a loopback host name (no DNS
rebinding); bound elsewhere every page lives under ``/<token>/``. Label forms carry a
per-process form token, so another site cannot post labels through the user's browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Hashable
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from .._util import stylesheet
from ..api import ApiError, Client, ConfigurationError
from ..audio import SpeakOptions, speak
from ..data import nastaliq_font_path
from ..report import Filters, bundled_nastaliq_bytes, run_voice
from ..store import Label, RunNotFoundError, StoreError, default_labeller
from ._cache import PageCache
from ._compare_pages import changes_page, compare_page, history_page
from ._optimize_pages import optimisations, optimize_page
from ._options import ViewerOptions, is_loopback
from ._pages import Pages
from ._paths import compare_path, seg
from ._queue_page import queue_page
from ._site import Site

__all__ = ["STATIC", "ViewerApp", "build_app", "nastaliq_font"]

logger = logging.getLogger("evalkit.view")

T = TypeVar("T")

AUDIO_FORMAT = "MP3_22050_32"
AUDIO_MIME = "audio/mpeg"
STATIC = {"evalkit.css": "text/css", "viewer.js": "text/javascript"}


def static_bytes(name: str) -> bytes:
    """A file of :data:`STATIC`: the one stylesheet (``evalkit/templates/evalkit.css``, shared
    with the report and every notebook display) or the viewer's script."""
    if name == "evalkit.css":
        return stylesheet().encode("utf-8")
    return files("evalkit.view").joinpath("static", name).read_bytes()


MAX_FORM_BYTES = 16_384
#: Pages rendered at once (in worker threads): enough that short pages are not held up for
#: long behind a slow one (a 236-run history takes 30-40 s), few enough to bound the frames
#: held in memory at once (4 halved the throughput of short pages in a cold burst).
RENDERS_AT_ONCE = 8
#: What the cache of rendered pages may hold.
CACHE_BYTES = 64 * 1024 * 1024
CACHE_PAGES = 2_000

#: What a page reads, for its cache key: the whole store (None) or some runs' folders.
Scope = Callable[[Request], "tuple[str, ...] | None"]


class ViewerApp:
    """The viewer's state: the site, the pages, the (lazy) service client."""

    def __init__(self, options: ViewerOptions) -> None:
        self.options = options
        self.site = Site(options.store, options.storage_options)
        self.form_token = secrets.token_urlsafe(16)
        self.pages = Pages(
            self.site,
            live=True,
            form_token=self.form_token,
            labeller=default_labeller(),
            refresh_s=options.refresh_s,
            page_size=options.page_size,
        )
        self._client = options.client
        self._own_client: Client | None = None
        self._lock = threading.Lock()
        self.cache = PageCache(CACHE_BYTES, CACHE_PAGES)
        self.renders = asyncio.Semaphore(RENDERS_AT_ONCE)
        self._rendering: dict[Hashable, asyncio.Task[bytes]] = {}
        self._arrivals = 0
        self._store_stamp: tuple[int, asyncio.Task[str | None]] | None = None

    async def stamp(self, runs: tuple[str, ...] | None) -> str | None:
        """The site's stamp of ``runs``' folders, taken at once on the event loop (a few dozen
        ``stat`` calls), or with None of the whole store, in a worker thread and shared by
        every request that arrived before that stamping began (never by a later one: it
        might miss a change made in between)."""
        if runs is not None:
            return self.site.stamp(runs)
        self._arrivals += 1
        ticket = self._arrivals
        while (flight := self._store_stamp) is not None:
            if ticket <= flight[0]:
                return await asyncio.shield(flight[1])
            await asyncio.wait([flight[1]])  # then start one, or join one started since
        task = _detached(run_in_threadpool(self.site.stamp, None))
        self._store_stamp = (self._arrivals, task)

        def done(_: asyncio.Task[str | None]) -> None:
            self._store_stamp = None

        task.add_done_callback(done)
        return await asyncio.shield(task)

    async def page(self, key: Hashable | None, render: Callable[[], str]) -> bytes:
        """The page for ``key`` from the cache, else rendered in a worker thread (at most
        :data:`RENDERS_AT_ONCE` at a time; requests for a page being rendered wait for that
        render instead of starting their own, and a request that goes away leaves it to
        finish for the others). ``key`` None: rendered every time."""
        if key is None:
            return await self._render(None, render)
        body = self.cache.get(key)
        if body is not None:
            return body
        task = self._rendering.get(key)
        if task is None:
            task = _detached(self._render(key, render))
            self._rendering[key] = task
            task.add_done_callback(lambda _: self._rendering.pop(key, None))
        return await asyncio.shield(task)

    async def _render(self, key: Hashable | None, render: Callable[[], str]) -> bytes:
        async with self.renders:
            body = (await run_in_threadpool(render)).encode("utf-8")
        if key is not None:
            self.cache.put(key, body)
        return body

    def client(self) -> Client:
        """The client that synthesizes played turns (made from the environment once)."""
        with self._lock:
            if self._client is None:
                self._own_client = Client()
                self._client = self._own_client
            return self._client

    def close(self) -> None:
        if self._own_client is not None:
            self._own_client.close()


def _detached(work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """``work`` as a task of its own, which the requests waiting for it share: one that goes
    away does not cancel it for the others; an error nobody waited for is not logged twice."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return task


def _page(render: Callable[[Request], str], scope: Scope) -> Callable[[Request], Any]:
    """An endpoint that serves a page from the viewer's cache, keyed by the address and a
    stamp of what the page reads (``scope``), else renders it in a worker thread; a missing
    run or conversation is a 404 page, a refused value a 400 page."""

    async def endpoint(request: Request) -> Response:
        viewer = _viewer(request)
        try:
            stamp = await viewer.stamp(scope(request))
            key = None if stamp is None else (request.url.path, request.url.query, stamp)
            body = await viewer.page(key, lambda: render(request))
        except (RunNotFoundError, KeyError) as exc:
            return HTMLResponse(_error(request, "Not found", exc), status_code=404)
        except ValueError as exc:
            return HTMLResponse(_error(request, "Not accepted", exc), status_code=400)
        return HTMLResponse(body)

    return endpoint


def _store(request: Request) -> None:
    """The page reads the whole store (the catalog, a history)."""
    return None


def _one_run(request: Request) -> tuple[str, ...]:
    return (request.path_params["run_id"],)


def _two_runs(request: Request) -> tuple[str, ...]:
    return (request.path_params["baseline"], request.path_params["candidate"])


def _error(request: Request, heading: str, exc: BaseException) -> str:
    app: ViewerApp = request.app.state.viewer
    message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    depth = request.url.path.count("/") - (2 if app.options.token else 1)
    root = "../" * max(depth, 0)
    return app.pages.render(
        "view/error.html", root, title=heading, heading=heading, message=message
    )


def _viewer(request: Request) -> ViewerApp:
    viewer: ViewerApp = request.app.state.viewer
    return viewer


def _index(request: Request) -> str:
    pages = _viewer(request).pages
    return pages.index(searches=optimisations(pages))


def _run(request: Request) -> str:
    query = request.query_params
    try:
        offset = int(query.get("offset") or 0)
    except ValueError as exc:
        raise ValueError(f"offset must be a whole number, got {query.get('offset')!r}") from exc
    return _viewer(request).pages.run(
        request.path_params["run_id"], Filters.from_mapping(query), offset
    )


def _conversation(request: Request) -> str:
    p = request.path_params
    return _viewer(request).pages.conversation(p["run_id"], p["cid"])


def _queue(request: Request) -> str:
    return queue_page(
        _viewer(request).pages, request.path_params["run_id"], dict(request.query_params)
    )


def _compare(request: Request) -> str:
    p = request.path_params
    return compare_page(_viewer(request).pages, p["baseline"], p["candidate"])


def _history(request: Request) -> str:
    return history_page(_viewer(request).pages, request.path_params["assistant"])


def _optimize(request: Request) -> str:
    return optimize_page(_viewer(request).pages, request.path_params["prefix"])


def _changes(request: Request) -> str:
    return changes_page(_viewer(request).pages, request.path_params["run_id"])


async def _compare_form(request: Request) -> Response:
    q = request.query_params
    baseline, candidate = q.get("baseline") or "", q.get("candidate") or ""
    if not baseline or not candidate:
        return RedirectResponse("index.html", status_code=303)
    return RedirectResponse(compare_path(baseline, candidate), status_code=303)


async def _label(request: Request) -> Response:
    viewer = _viewer(request)
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return HTMLResponse(
            _error(request, "Not accepted", ValueError("the form is too large")), 413
        )
    cross = _cross_site(request)
    if cross:
        return HTMLResponse(_error(request, "Not accepted", ValueError(cross)), status_code=403)
    pairs = parse_qsl(
        body.decode("ascii", "surrogateescape"),
        keep_blank_values=True,
        encoding="utf-8",
        errors="surrogateescape",
    )
    bad = next((k for k, v in pairs if _not_utf8(k) or _not_utf8(v)), None)
    if bad is not None:
        field = bad.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return HTMLResponse(
            _error(request, "Not accepted", ValueError(f"{field}: not valid UTF-8 text")), 400
        )
    form = dict(pairs)
    if not secrets.compare_digest(form.get("form_token", ""), viewer.form_token):
        return HTMLResponse(
            _error(request, "Not accepted", ValueError("this form is stale: reload the page")),
            status_code=403,
        )
    run_id, cid = request.path_params["run_id"], request.path_params["cid"]

    def store() -> None:
        data = viewer.site.run(run_id)
        label = Label(
            conversation_id=cid,
            rule_id=form.get("rule_id", ""),
            label=form.get("label", ""),
            note=form.get("note", ""),
            labelled_by=form.get("labelled_by", "").strip()[:100],
            rubric_version_id=data.rubric,
            judge_verdict=form.get("judge_verdict") or None,
            inclusion_probability=form.get("inclusion_probability") or None,  # type: ignore[arg-type]
        )
        data.run.add_labels([label])

    try:
        await run_in_threadpool(store)
    except (RunNotFoundError, KeyError) as exc:
        return HTMLResponse(_error(request, "Not found", exc), status_code=404)
    except ValueError as exc:
        return HTMLResponse(_error(request, "Not accepted", exc), status_code=400)
    following = form.get("next", "")
    if following.startswith("../../queue.html?") and "//" not in following:
        return RedirectResponse(following, status_code=303)  # the label queue's next pair
    anchor = f"#rule-{seg(form.get('rule_id', ''))}"
    return RedirectResponse(f"../{seg(cid)}.html{anchor}", status_code=303)


def _not_utf8(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _cross_site(request: Request) -> str | None:
    """Why a form post comes from another site (``Sec-Fetch-Site``, else ``Origin`` against
    the request's own host), or None: beside the form token, so a page elsewhere cannot post
    labels through the user's browser."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a form posted from another site (Sec-Fetch-Site: {site}) is refused"
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        host = request.headers.get("host", "")
        if origin.split("://", 1)[-1].rstrip("/") != host:
            return f"a form posted from another origin ({origin}) is refused"
    elif origin == "null":
        return "a form posted from an opaque origin is refused"
    return None


async def _audio(request: Request) -> Response:
    viewer = _viewer(request)
    p = request.path_params

    def synthesize() -> bytes:
        data = viewer.site.run(p["run_id"])
        turns = data.turns_of(p["cid"])
        match = turns[(turns["index"] == int(p["turn"])) & (turns["role"] == "agent")]
        if match.empty:
            raise KeyError(f"no agent turn {p['turn']} in {p['cid']}")
        voice, phrase_config = run_voice(data.run.manifest)
        audio = speak(
            str(match["text"].iloc[0]),
            client=viewer.client(),
            store=viewer.site.root,
            options=SpeakOptions(
                voice_id=voice,
                phrase_replacement_config_id=phrase_config,
                output_format=AUDIO_FORMAT,
            ),
        )
        return audio.data

    try:
        data = await run_in_threadpool(synthesize)
    except (RunNotFoundError, KeyError) as exc:
        return Response(str(exc), status_code=404, media_type="text/plain")
    except ConfigurationError as exc:
        return Response(f"no service to synthesize with: {exc}", 503, media_type="text/plain")
    except (ApiError, StoreError, ValueError) as exc:
        logger.warning("audio for %s turn %s: %s", p["cid"], p["turn"], exc)
        return Response(f"synthesis failed: {exc}", status_code=502, media_type="text/plain")
    headers = {"Cache-Control": "private, max-age=86400"}
    return Response(data, media_type=AUDIO_MIME, headers=headers)


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name == "nastaliq.ttf":
        font = bundled_nastaliq_bytes()
        if font is None:
            return Response("evalkit's Nastaliq font cannot be read", 500, media_type="text/plain")
        return Response(font, media_type="font/ttf", headers={"Cache-Control": "max-age=86400"})
    if name not in STATIC:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(static_bytes(name), media_type=STATIC[name])


def nastaliq_font() -> Path | None:
    """The Nastaliq font file evalkit ships (served so Urdu renders in Nastaliq anywhere)."""
    path = nastaliq_font_path()
    return path if path.is_file() else None


async def _root(request: Request) -> Response:
    return RedirectResponse("index.html", status_code=307)


def _routes() -> list[BaseRoute]:
    return [
        Route("/", _root),
        Route("/index.html", _page(_index, _store)),
        Route("/compare.html", _compare_form),
        Route("/runs/{run_id}/", _root),
        Route("/runs/{run_id}/index.html", _page(_run, _one_run)),
        Route("/runs/{run_id}/c/{cid}.html", _page(_conversation, _one_run)),
        Route("/runs/{run_id}/queue.html", _page(_queue, _one_run)),
        Route("/runs/{run_id}/c/{cid}/label", _label, methods=["POST"]),
        Route("/runs/{run_id}/audio/{cid}/{turn:int}.mp3", _audio),
        Route("/compare/{baseline}/{candidate}.html", _page(_compare, _two_runs)),
        Route("/history/{assistant}.html", _page(_history, _store)),
        Route("/optimize/{prefix}.html", _page(_optimize, _store)),
        Route("/changes/{run_id}.html", _page(_changes, _store)),
        Route("/static/{name}", _static),
    ]


async def _forbidden(request: Request) -> Response:
    return Response("this viewer needs its token in the address", 403, media_type="text/plain")


def build_app(options: ViewerOptions) -> Starlette:
    """The viewer's ASGI app for ``options`` (see :meth:`ViewerOptions.resolved`)."""
    viewer = ViewerApp(options)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            viewer.close()

    routes: list[BaseRoute] = _routes()
    if options.token:
        routes = [Mount(f"/{options.token}", routes=routes), Route("/{path:path}", _forbidden)]
    middleware = []
    if is_loopback(options.host):
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.viewer = viewer
    return app
