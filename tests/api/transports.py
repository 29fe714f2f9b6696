"""httpx transports that sit between the real client and the real server, like a bad network or proxy.

They never answer for the server: every request they pass reaches it, so what
the server does is real; they only lose answers or refuse one route.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx


class LoseResponses(httpx.AsyncBaseTransport):
    """Delivers requests but loses the first ``count`` matching responses, as a client timeout would."""

    def __init__(
        self, count: int, match: Callable[[httpx.Request], bool] = lambda r: r.method == "POST"
    ) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._remaining = count
        self._match = match
        self.lost: list[httpx.Request] = []
        self.delivered: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if self._remaining > 0 and self._match(request):
            await response.aread()  # the server finished its work; only the answer is lost
            await response.aclose()
            self._remaining -= 1
            self.lost.append(request)
            raise httpx.ReadTimeout("simulated: the response was lost", request=request)
        self.delivered.append(request)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class BlockStream(httpx.AsyncBaseTransport):
    """A proxy that does not pass event streams: ``/v1/events`` gets 404, everything else goes through."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.blocked = 0
        self.blocking = True

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.blocking and request.url.path == "/v1/events":
            self.blocked += 1
            return httpx.Response(
                404, headers={"content-type": "text/html"}, text="<h1>404</h1>", request=request
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class Exchange:
    """One request and the status it got, as seen on the wire."""

    def __init__(self, request: httpx.Request, response: httpx.Response) -> None:
        self.method = request.method
        self.path = request.url.path
        self.key = request.headers.get("idempotency-key")
        self.status = response.status_code
        self.replayed = response.headers.get("idempotent-replayed") == "true"


class Recording(httpx.AsyncBaseTransport):
    """Passes everything through and records each exchange; tests can wait for one."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.exchanges: list[Exchange] = []
        self._news = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        self.exchanges.append(Exchange(request, response))
        self._news.set()
        return response

    async def wait_for(self, condition: Callable[[Exchange], bool]) -> Exchange:
        """The first exchange meeting ``condition``, waiting for it if needed (wrap in a timeout)."""
        while True:
            for exchange in self.exchanges:
                if condition(exchange):
                    return exchange
            self._news.clear()
            await self._news.wait()

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CutAfterEvents(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, events: int) -> None:
        self._inner = inner
        self._events = events

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        seen = b""
        sent = 0
        async for chunk in self._inner:
            if self._events == 0:  # cut right after the first chunk (the stream's greeting)
                yield chunk
                raise httpx.ReadError("simulated: the connection dropped")
            seen += chunk
            end = 0
            count = 0
            for frame in seen.split(b"\n\n")[:-1]:
                end += len(frame) + 2
                if (b"\n" + frame).find(b"\ndata:") >= 0:
                    count += 1
                    if count == self._events:
                        yield seen[sent:end]
                        raise httpx.ReadError("simulated: the connection dropped")
            yield seen[sent:]
            sent = len(seen)

    async def aclose(self) -> None:
        await self._inner.aclose()  # type: ignore[attr-defined]


class CutStream(httpx.AsyncBaseTransport):
    """Drops the first event-stream connection after its ``events``-th event (0: after its greeting)."""

    def __init__(self, events: int) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._events = events
        self.stream_requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if request.url.path != "/v1/events":
            return response
        self.stream_requests.append(request)
        if len(self.stream_requests) > 1:
            return response
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CutAfterEvents(response.stream, self._events),
            request=request,
        )  # type: ignore[arg-type]

    async def aclose(self) -> None:
        await self._inner.aclose()
