"""Run an ASGI app under a real uvicorn server on 127.0.0.1 for a test (real sockets, real SSE)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from .waiting import wait_until


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve ``app`` on a pre-bound loopback socket in a daemon thread; yields ``http://host:port``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 10, what="the test server to start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(3)
        if thread.is_alive():
            server.force_exit = True
            thread.join(3)
        sock.close()
