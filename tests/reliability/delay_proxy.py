"""A loopback TCP proxy that holds the server's answers back for ``delay`` seconds: a slow link or server."""

from __future__ import annotations

import asyncio
import contextlib


class DelayProxy:
    """``async with DelayProxy(port) as proxy``: clients use ``proxy.url``; set ``proxy.delay`` at any time."""

    def __init__(self, upstream_port: int, delay: float = 0.0) -> None:
        self.upstream_port = upstream_port
        self.delay = delay
        self.url = ""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> DelayProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task
        await self._server.wait_closed()

    async def _accept(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        server_reader, server_writer = await asyncio.open_connection(
            "127.0.0.1", self.upstream_port
        )
        for task in (
            self._pipe(client_reader, server_writer, slow=False),
            self._pipe(server_reader, client_writer, slow=True),
        ):
            handle = asyncio.create_task(task)
            self._tasks.add(handle)
            handle.add_done_callback(self._tasks.discard)

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slow: bool
    ) -> None:
        try:
            while chunk := await reader.read(65536):
                if slow and self.delay:
                    await asyncio.sleep(
                        self.delay
                    )  # the fault being simulated, not a wait for state
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
