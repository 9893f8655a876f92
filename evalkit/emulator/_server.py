"""Serving the emulator: uvicorn on a pre-bound loopback socket in a daemon thread.

``with serve(port=0) as emu:`` gives ``emu.base_url`` (ending ``/v1``), ``emu.api_key`` and
convenience methods that call the admin API over HTTP. Shutdown ends open simulate streams
first, then asks uvicorn to exit, and forces it after a short grace period.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from ._app import build_app
from ._core import Emulator
from ._settings import EmulatorSettings
from .dialogue import DialogueBackend

logger = logging.getLogger("evalkit.emulator")

LIVEKIT_KEY_ENV = "EVALKIT_LIVEKIT_API_KEY"
LIVEKIT_SECRET_ENV = "EVALKIT_LIVEKIT_API_SECRET"
GRACEFUL_SHUTDOWN_S = 1
STARTUP_TIMEOUT_S = 15.0


def bind_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A listening TCP socket (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(
        family, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )  # asyncio sets TCP_NODELAY only then
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def uvicorn_config(app: Any, *, log_level: str = "warning") -> uvicorn.Config:
    """The uvicorn settings the emulator runs with (no logging reconfiguration)."""
    return uvicorn.Config(
        app,
        log_config=None,
        log_level=log_level,
        access_log=False,
        lifespan="on",
        loop="asyncio",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        timeout_keep_alive=30,
        backlog=2048,
    )


class EmulatorServer:
    """A running emulator (a context manager). ``base_url`` ends with ``/v1``."""

    def __init__(self, emulator: Emulator, host: str = "127.0.0.1", port: int = 0) -> None:
        self.emulator = emulator
        self.host = host
        self._requested_port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._http: httpx.Client | None = None
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        """The server's root (``http://host:port``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def judge_base_url(self) -> str:
        """The emulated judge's OpenAI-compatible base URL (model ``emulator-judge``)."""
        return self.url + "/_emulator/judge/v1"

    @property
    def proposer_base_url(self) -> str:
        """The emulated proposer's OpenAI-compatible base URL (model ``emulator-proposer``)."""
        return self.url + "/_emulator/proposer/v1"

    @property
    def generator_base_url(self) -> str:
        """The emulated persona generator's OpenAI-compatible base URL (model
        ``emulator-generator``)."""
        return self.url + "/_emulator/generator/v1"

    @property
    def admin_url(self) -> str:
        return self.url + "/_emulator"

    @property
    def api_key(self) -> str:
        """The default project's key."""
        return self.emulator.api_key

    @property
    def livekit_url(self) -> str:
        """The room server address sessions carry as ``wsUrl`` (``ws://host:port``)."""
        return "ws" + self.url[len("http") :]

    @property
    def livekit_api_key(self) -> str:
        """The LiveKit API key session tokens are issued under (their ``iss``)."""
        return self.emulator.livekit_api_key

    @property
    def livekit_api_secret(self) -> str:
        """The secret session tokens are signed with (give it to a LiveKit server or a
        ``TokenVerifier`` together with :attr:`livekit_api_key`)."""
        return self.emulator.livekit_api_secret

    def start(self) -> EmulatorServer:
        """Bind, start uvicorn in a daemon thread and wait until it accepts connections."""
        if self._thread is not None:
            return self
        self._sock = bind_socket(self.host, self._requested_port)
        self.port = int(self._sock.getsockname()[1])
        server = uvicorn.Server(uvicorn_config(build_app(self.emulator)))
        self._server = server
        self._thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [self._sock]},
            daemon=True,
            name=f"evalkit-emulator-{self.port}",
        )
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the emulator did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """End open streams, stop uvicorn (forcing it after a grace period), close the db."""
        server, thread = self._server, self._thread
        loop = self.emulator.loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self.emulator.close_streams)
            except RuntimeError:
                logger.debug("the emulator loop closed before its streams could be ended")
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(GRACEFUL_SHUTDOWN_S + 1.5)
            if thread.is_alive() and server is not None:
                server.force_exit = True
                thread.join(3.0)
        if self._http is not None:
            self._http.close()
            self._http = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._thread = None
        self._server = None
        self.emulator.close()

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmulatorServer(base_url={self.base_url!r})"

    # ------------------------------------------------------------------ admin API over HTTP

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = httpx.Client(base_url=self.admin_url, timeout=30.0)
        return self._http

    def admin(self, method: str, path: str, json: Any = None, *, api_key: str | None = None) -> Any:
        """Call an admin endpoint (``path`` relative to ``/_emulator``); the JSON answer.

        Raises ``httpx.HTTPStatusError`` on an error status.
        """
        headers = {"Authorization": f"Bearer {api_key or self.api_key}"}
        response = self._client().request(method, path, json=json, headers=headers)
        response.raise_for_status()
        return response.json() if response.content else None

    def new_project(self, organization_id: str | None = None) -> dict[str, str]:
        """A new project: {organizationId, projectId, apiKey}."""
        body = {"organizationId": organization_id} if organization_id else {}
        result: dict[str, str] = self.admin("POST", "/projects", body)
        return result

    def publish(
        self, assistant_id: str, *, readable: bool | None = None, api_key: str | None = None
    ) -> dict[str, Any]:
        """Point `prod` at the current draft version; E5-shaped metadata back."""
        body = {} if readable is None else {"readable": readable}
        result: dict[str, Any] = self.admin(
            "POST", f"/assistants/{assistant_id}/publish", body, api_key=api_key
        )
        return result

    def set_readable(
        self, assistant_id: str, readable: bool, *, api_key: str | None = None
    ) -> dict[str, Any]:
        """Hold the published version unreadable (E8 answers 503) or release it."""
        result: dict[str, Any] = self.admin(
            "PUT", f"/assistants/{assistant_id}/readable", {"readable": readable}, api_key=api_key
        )
        return result

    def versions(self, assistant_id: str, *, api_key: str | None = None) -> list[dict[str, Any]]:
        """Every saved version of an assistant, with its config."""
        result: list[dict[str, Any]] = self.admin(
            "GET", f"/assistants/{assistant_id}/versions", api_key=api_key
        )
        return result

    def build(
        self,
        name: str,
        brief: dict[str, Any],
        instructions: str,
        *,
        initial_greeting: bool | None = None,
        config: dict[str, Any] | None = None,
        api_key: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """An assistant built from a brief (with build artifacts, so refine works)."""
        body: dict[str, Any] = {"name": name, "brief": brief, "instructions": instructions}
        if initial_greeting is not None:
            body["initialGreeting"] = initial_greeting
        if config is not None:
            body["config"] = config
        body.update(extra)
        result: dict[str, Any] = self.admin("POST", "/builds", body, api_key=api_key)
        return result

    def build_status(self, build_id: str, *, api_key: str | None = None) -> dict[str, Any]:
        """{buildId, assistantId, status, ...} of a build."""
        result: dict[str, Any] = self.admin("GET", f"/builds/{build_id}", api_key=api_key)
        return result

    def create_contact_list(
        self, contact_list: dict[str, Any], *, api_key: str | None = None
    ) -> dict[str, Any]:
        """Store a contact list (without ids and timestamps); the stored list back."""
        result: dict[str, Any] = self.admin("POST", "/contact-lists", contact_list, api_key=api_key)
        return result

    def set_faults(
        self,
        *,
        drop_rate: float = 0.0,
        error_event_rate: float = 0.0,
        http429_rate: float = 0.0,
        http503_rate: float = 0.0,
        seed: int | None = None,
        api_key: str | None = None,
    ) -> dict[str, Any]:
        """Replace the project's fault rates (0..1)."""
        body = {
            "dropRate": drop_rate,
            "errorEventRate": error_event_rate,
            "http429Rate": http429_rate,
            "http503Rate": http503_rate,
            "seed": seed,
        }
        result: dict[str, Any] = self.admin("PUT", "/faults", body, api_key=api_key)
        return result

    def set_credits(self, credits: float | None, *, api_key: str | None = None) -> dict[str, Any]:
        """Set the organization's credits (None: unlimited; 0 makes E8 answer 402)."""
        result: dict[str, Any] = self.admin(
            "PUT", "/credits", {"credits": credits}, api_key=api_key
        )
        return result

    def set_synthesis_limit(self, requests_per_minute: int | None) -> dict[str, Any]:
        """Cap E11/E12 requests per project per emulated minute (None: no cap)."""
        body = {"requestsPerMinute": requests_per_minute}
        result: dict[str, Any] = self.admin("PUT", "/synthesis-limit", body)
        return result

    def stats(self) -> dict[str, int]:
        """Simulation counters: started, completed, cancelled, active, errored, dropped."""
        result: dict[str, int] = self.admin("GET", "/stats")
        return result


def serve(
    port: int = 0,
    api_key: str | None = None,
    time_scale: float = 1.0,
    seed: int | None = None,
    turn_delay: float = 0.0,
    host: str = "127.0.0.1",
    db: str | Path | None = None,
    backend: DialogueBackend | None = None,
    *,
    settings: EmulatorSettings | None = None,
    livekit_api_key: str | None = None,
    livekit_api_secret: str | None = None,
    turn_jitter: float | None = None,
) -> EmulatorServer:
    """An emulator server to use as a context manager (``with serve() as emu:``).

    ``api_key`` None generates a key (or, with ``db``, adds a fresh one to the stored default
    project); a given key must start with ``sk_api_``. ``settings`` wins over ``time_scale``,
    ``seed``, ``turn_delay`` and ``turn_jitter`` (None: the settings' default spread of turn
    latencies). ``livekit_api_key``/``livekit_api_secret`` (default: the
    ``EVALKIT_LIVEKIT_API_KEY``/``EVALKIT_LIVEKIT_API_SECRET`` environment variables, else a
    generated pair) sign session tokens.
    """
    if settings is None:
        settings = EmulatorSettings(time_scale=time_scale, seed=seed, turn_delay=turn_delay)
        if turn_jitter is not None:
            settings = dataclasses.replace(settings, turn_jitter=turn_jitter)
    key = livekit_api_key or os.environ.get(LIVEKIT_KEY_ENV) or settings.livekit_api_key
    secret = livekit_api_secret or os.environ.get(LIVEKIT_SECRET_ENV) or settings.livekit_api_secret
    settings = dataclasses.replace(settings, livekit_api_key=key, livekit_api_secret=secret)
    emulator = Emulator(settings, api_key=api_key, db=db, backend=backend)
    return EmulatorServer(emulator, host=host, port=port)
