"""A judge endpoint that misbehaves on purpose, over real HTTP/1.1 on 127.0.0.1.

Written on raw asyncio sockets (not an ASGI app) so it can do what no well-behaved framework
does: trickle one byte a second, send 50 MB, or read the request and never answer. It records
each connection's life (opened, closed by either side), which is the server's view of how long
each judge call took.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["trickle", "huge", "huge_chunked", "silent"]
PREFIX = b'{"choices":[{"message":{"role":"assistant","content":"'
SUFFIX = b'"}}]}'
CHUNK = 64 * 1024
_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


@dataclass
class Connection:
    opened: float
    closed: float | None = None
    sent: int = 0

    @property
    def seconds(self) -> float:
        assert self.closed is not None, "the connection is still open"
        return self.closed - self.opened


@dataclass
class HostileJudge:
    """``mode``: ``trickle`` (one byte a second of a 10 kB answer), ``huge`` (``size`` bytes
    with a Content-Length), ``huge_chunked`` (the same, chunked: no length up front),
    ``silent`` (reads the request, never answers)."""

    mode: Mode
    size: int = 50 * 1024 * 1024
    connections: list[Connection] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on a loopback port in a daemon thread; yields the base URL (``.../v1``)."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        stop = asyncio.Event()
        port: list[int] = []

        async def main() -> None:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            port.append(server.sockets[0].getsockname()[1])
            started.set()
            await stop.wait()
            server.close()
            handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        def run() -> None:
            loop.run_until_complete(main())
            loop.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        assert started.wait(10), "the hostile judge did not start"
        try:
            yield f"http://127.0.0.1:{port[0]}/v1"
        finally:
            loop.call_soon_threadsafe(stop.set)
            thread.join(5)

    def finished(self) -> list[Connection]:
        with self.lock:
            return [c for c in self.connections if c.closed is not None]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection(time.monotonic())
        with self.lock:
            self.connections.append(conn)
        gone: asyncio.Future[bytes] | None = None
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = _LENGTH.search(head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            gone = asyncio.ensure_future(reader.read())  # b"" when the client closes
            await self._answer(writer, conn, gone)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            conn.closed = time.monotonic()
            writer.close()
            if gone is not None:
                gone.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                    await gone

    async def _answer(
        self, writer: asyncio.StreamWriter, conn: Connection, gone: asyncio.Future[bytes]
    ) -> None:
        if self.mode == "silent":
            await gone
            return
        if self.mode == "trickle":
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
            writer.write(b"content-length: 10000\r\n\r\n")
            while not gone.done():
                writer.write(PREFIX[conn.sent % len(PREFIX) :][:1])
                conn.sent += 1
                await writer.drain()
                await asyncio.wait([gone], timeout=1.0)
            return
        chunked = self.mode == "huge_chunked"
        framing = b"transfer-encoding: chunked" if chunked else b"content-length: %d" % self.size
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%s\r\n\r\n" % framing)
        for part in self._body():
            if gone.done():
                return
            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
            conn.sent += len(part)
            await writer.drain()
        if chunked:
            writer.write(b"0\r\n\r\n")
        await gone

    def _body(self) -> Iterator[bytes]:
        """``size`` bytes of one JSON completion, made of a repeated chunk (the server stays small)."""
        filler = b"a" * CHUNK
        yield PREFIX
        left = self.size - len(PREFIX) - len(SUFFIX)
        while left > 0:
            yield filler[: min(CHUNK, left)]
            left -= CHUNK
        yield SUFFIX
