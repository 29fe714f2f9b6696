"""What one connection may cost the server: request head and body sizes and the time to send them.

Enforced below routing and authentication, so an anonymous client is held to
them as much as any other:

- A request head (request line and headers) has HEAD_TIMEOUT_SECONDS to
  arrive whole, on a new connection and between keep-alive requests; h11
  refuses one over MAX_HEAD_BYTES. uvicorn has no such deadline of its own:
  its keep-alive timer stops at the first byte of the next request. After an
  answer, what is left of a body the route never read (uvicorn drops it
  unread) must end within the same deadline: otherwise a body trickled to
  /healthz would hold the connection for ever.
- A body over its route's limit is refused with 413 before it is parsed: at
  once when Content-Length says so, otherwise as soon as the bytes read pass
  it; and it has BODY_TIMEOUT_SECONDS to arrive.

FastAPI has a ``max_body_size`` of its own, but it answers text/plain when
Content-Length is over the limit; every error here is problem+json.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from fleetdesk.wire import PROBLEM_CONTENT_TYPE, ProblemType

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_HEAD_BYTES = 16 * 1024
HEAD_TIMEOUT_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
BODY_TIMEOUT_SECONDS = 30.0

MAX_BODY_BYTES = 256 * 1024
"""Any route's body: an action with a full reason and note, every character escaped, is about 150 KiB."""
BODY_LIMITS = {"/v1/metrics": 16 * 1024 * 1024, "/v1/registry/apply": 32 * 1024 * 1024}
"""Routes that take more: an ingest batch of 50,000 buckets (its most) is about 10 MiB; a registry apply of
25,000 models is about 19 MiB (the large fleet's 1,200 are 0.9 MiB)."""


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose next request head does not arrive in time."""

    _head_deadline: asyncio.TimerHandle | None = None
    _answered: object = None
    """The request/response cycle that was answered when the deadline was set (None on a new connection)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect_head()

    def on_response_complete(self) -> None:
        answered = self.cycle  # super() may start a pipelined request's cycle
        super().on_response_complete()
        self._expect_head(answered)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _expect_head(self, answered: object = None) -> None:
        self._stop_waiting()
        self._answered = answered
        self._head_deadline = self.loop.call_later(HEAD_TIMEOUT_SECONDS, self._head_overdue)

    def _stop_waiting(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_overdue(self) -> None:
        # No new request since the deadline was set: the client is still sending a partial head (IDLE) or the
        # unread rest of the answered request's body (SEND_BODY).
        waiting = self.cycle is self._answered and self.conn.their_state in (
            h11.IDLE,
            h11.SEND_BODY,
        )
        if waiting and not self.transport.is_closing():
            self.transport.close()


class BodyLimitMiddleware:
    """Pure ASGI middleware (event streams keep streaming): 413 past a route's body limit, 408 past the deadline."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = BODY_LIMITS.get(scope["path"], MAX_BODY_BYTES)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(
                scope,
                send,
                413,
                f"the request body is {declared} bytes; this route takes at most {limit}",
            )
            return
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + BODY_TIMEOUT_SECONDS
        received = 0
        complete = False
        refusal: tuple[int, str] | None = None

        async def bounded_receive() -> Message:
            nonlocal received, complete, refusal
            if complete:
                return await receive()  # the body is in: what is left is waiting for a disconnect
            try:
                async with asyncio.timeout_at(give_up_at):
                    message = await receive()
            except TimeoutError:
                refusal = (
                    408,
                    f"the request body did not arrive within {BODY_TIMEOUT_SECONDS:g} s",
                )
                raise _Refused from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if received > limit:
                    refusal = (
                        413,
                        f"the request body is over {limit} bytes, the most this route takes",
                    )
                    raise _Refused
            return message

        started = False

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if refusal is not None:
                return  # the app answered its failed read (FastAPI makes it a 400); the refusal is the answer
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracked_send)
        except _Refused:
            pass
        if refusal is not None and not started:
            await _refuse(scope, send, *refusal)


class _Refused(Exception):
    """Raised into the app's body read; the middleware answers instead."""


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None  # h11 already refused a malformed one
    return None


async def _refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
    # Connection: close, so the rest of a body nobody will read is not waited for on this connection.
    title, problem = {
        413: ("Content Too Large", ProblemType.PAYLOAD_TOO_LARGE),
        408: ("Request Timeout", ProblemType.REQUEST_TIMEOUT),
    }[status]
    body = json.dumps(
        {
            "type": problem.value,
            "title": title,
            "status": status,
            "detail": detail,
            "instance": scope["path"],
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_CONTENT_TYPE.encode()),
                (b"connection", b"close"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
