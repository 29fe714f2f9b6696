"""A throwaway loopback HTTP server that answers with whatever bytes a test scripts.

It stands in for things that are *not* our backend: a web server that sends
HTML, a proxy that drops connections, a broken or hostile stream. Tests of the
client against our real backend use the ``server`` fixture instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class RawRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[RawRequest, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class RawServer:
    handler: Handler
    requests: list[RawRequest] = field(default_factory=list)
    url: str = ""
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                request = RawRequest(method, path, headers, body)
                self.requests.append(request)
                await self.handler(request, writer)
                await writer.drain()
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def response(status: int, content_type: str, body: bytes | str, *, extra: str = "") -> bytes:
    data = body.encode() if isinstance(body, str) else body
    head = (
        f"HTTP/1.1 {status} Whatever\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(data)}\r\n{extra}\r\n"
    )
    return head.encode() + data


def answer(status: int, content_type: str, body: bytes | str, *, extra: str = "") -> Handler:
    """A handler that answers every request the same way (``extra``: more header lines, CRLF-ended)."""

    async def handle(request: RawRequest, writer: asyncio.StreamWriter) -> None:
        writer.write(response(status, content_type, body, extra=extra))

    return handle
