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

from ._admin_client import EmulatorAdmin
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


class EmulatorServer(EmulatorAdmin):
    """A running emulator (a context manager). ``base_url`` ends with ``/v1``; the admin API
    helpers (:meth:`publish`, :meth:`build`, :meth:`stats`, ...) are :class:`EmulatorAdmin`'s."""

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
