"""Running the viewer: uvicorn on a pre-bound socket, in a daemon thread (:class:`ViewerServer`,
for notebooks and tests) or in the foreground (``evalkit view``)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import uvicorn

from ._app import build_app
from ._options import ViewerOptions

__all__ = ["ViewerServer", "bind", "serve_forever"]

logger = logging.getLogger("evalkit.view")

STARTUP_TIMEOUT_S = 15.0
SHUTDOWN_GRACE_S = 1
#: Connections the kernel queues before the server accepts them (uvicorn's own default): with
#: 128, a burst of 200 browsers' requests overflowed the queue and some connections were cut.
BACKLOG = 2048
#: How long an idle keep-alive connection stays open: longer than a slow page under load, so
#: a client does not reuse a connection the server is closing at that moment.
KEEP_ALIVE_S = 30


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _server(options: ViewerOptions) -> uvicorn.Server:
    config = uvicorn.Config(
        build_app(options),
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        loop="asyncio",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        timeout_keep_alive=KEEP_ALIVE_S,
        backlog=BACKLOG,
    )
    return uvicorn.Server(config)


def _url(options: ViewerOptions, port: int) -> str:
    host = f"[{options.host}]" if ":" in options.host else options.host
    prefix = f"/{options.token}" if options.token else ""
    return f"http://{host}:{port}{prefix}/index.html"


class ViewerServer:
    """A viewer running in a daemon thread (a context manager); :attr:`url` is its index."""

    def __init__(self, options: ViewerOptions) -> None:
        self.options = options.resolved()
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The index page's address (with the token when there is one)."""
        return _url(self.options, self.port)

    @property
    def base(self) -> str:
        """The address every page lives under (ends with ``/``)."""
        return self.url.removesuffix("index.html")

    def start(self) -> ViewerServer:
        sock = bind(self.options.host, self.options.port)
        self.port = int(sock.getsockname()[1])
        server = _server(self.options)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="evalkit-viewer"
        )
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the viewer did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(SHUTDOWN_GRACE_S + 4)
        if thread.is_alive():
            server.force_exit = True
            thread.join(5)
        self._server = self._thread = None

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve_forever(options: ViewerOptions, announce: Callable[[str], None] | None = None) -> None:
    """Serve in the foreground until Ctrl-C; ``announce`` gets the index's address first."""
    resolved = options.resolved()
    sock = bind(resolved.host, resolved.port)
    url = _url(resolved, int(sock.getsockname()[1]))
    logger.info("evalkit viewer on %s", url)
    if announce is not None:
        announce(url)
    _server(resolved).run(sockets=[sock])
