"""A real TCP proxy between the console and the real server, for network faults (not a mock of the backend).

``hold`` keeps back the server's answers to POST requests (the request itself
reaches the server and runs), so an action can be observed in flight or made
to time out on the console's side while it did happen on the server;
``hold(reads=True)`` keeps back the answers to GET requests instead (not the
live event stream), so a read can be made to return what is no longer true.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit


class HoldingProxy:
    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.holding = False
        self.holding_reads = False
        self.held = 0
        """Answers kept back since the last release."""
        self._release = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self.url = ""

    async def start(self) -> HoldingProxy:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def hold(self, reads: bool = False) -> None:
        self.holding, self.holding_reads = not reads, reads
        self._release.clear()

    def release(self) -> None:
        self.holding = self.holding_reads = False
        self._release.set()

    async def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            return
        state = {"post": False, "read": False}

        async def up() -> None:
            while data := await client_reader.read(65536):
                if data[:5] in (b"POST ", b"PUT /"):
                    state["post"], state["read"] = True, False
                elif data[:4] == b"GET ":
                    state["post"], state["read"] = False, not data.startswith(b"GET /v1/events")
                server_writer.write(data)
                await server_writer.drain()
            server_writer.close()

        async def down() -> None:
            while data := await server_reader.read(65536):
                if (state["post"] and self.holding) or (state["read"] and self.holding_reads):
                    self.held += 1
                    await self._release.wait()
                client_writer.write(data)
                await client_writer.drain()
            client_writer.close()

        tasks = [asyncio.create_task(up()), asyncio.create_task(down())]
        self._tasks.update(tasks)
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            self._tasks.difference_update(tasks)
            client_writer.close()
            server_writer.close()
