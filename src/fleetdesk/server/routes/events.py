"""Live updates as server-sent events, resumable with Last-Event-ID; and the same log for polling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from anyio import to_thread
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from fleetdesk.server.auth import Principal, access_ended
from fleetdesk.server.backend import Backend
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, PrincipalDep
from fleetdesk.server.events import read_events
from fleetdesk.server.store.event_log import last_id as last_event_id
from fleetdesk.wire import API_PREFIX, EventPage

router = APIRouter(prefix=f"{API_PREFIX}/events", tags=["events"])

HEARTBEAT_SECONDS = 15.0
ACCESS_CHECK_SECONDS = 2.0
"""How often an open stream checks that its token still grants access (revoked or expired: the stream ends)."""
BATCH = 500


def _frame_batch(backend: Backend, after: int) -> tuple[list[str], int]:
    events = read_events(backend.store.connection(), after, BATCH)
    frames = [f"id: {e.id}\nevent: {e.type.value}\ndata: {e.model_dump_json()}\n\n" for e in events]
    return frames, (events[-1].id if events else after)


def _ended(backend: Backend, principal: Principal) -> str | None:
    return access_ended(backend.store.connection(), principal)


async def _stream(
    request: Request, backend: Backend, principal: Principal, after: int
) -> AsyncIterator[str]:
    loop_event = backend.notifier.subscribe()
    _, wake = loop_event
    loop = asyncio.get_running_loop()
    try:
        # The id line tells the client where it stands before any event arrives, so a reconnect
        # after an early drop resumes here instead of at a later "now" (events in between kept).
        yield f"retry: 2000\nid: {after}\n: connected\n\n"
        quiet_since = loop.time()
        while not backend.closing.is_set():
            wake.clear()
            # Before every batch and every few seconds when quiet: a revoked or expired token gets nothing more,
            # and its stream ends (the client's reconnect is then refused with 401).
            ended = await to_thread.run_sync(_ended, backend, principal)
            if ended is not None:
                yield f": {ended}\n\n"
                return
            frames, after = await to_thread.run_sync(_frame_batch, backend, after)
            for frame in frames:
                yield frame
            if frames:
                quiet_since = loop.time()
            if len(frames) == BATCH:
                continue  # more waiting; no need to sleep
            if await request.is_disconnected():
                return
            try:
                await asyncio.wait_for(wake.wait(), ACCESS_CHECK_SECONDS)
            except TimeoutError:
                if loop.time() - quiet_since >= HEARTBEAT_SECONDS:
                    yield ": heartbeat\n\n"
                    quiet_since = loop.time()
    finally:
        backend.notifier.unsubscribe(loop_event)


@router.get(
    "",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "ServerEvent stream"}},
)
async def events(
    request: Request,
    backend: BackendDep,
    principal: PrincipalDep,
    last_event_id_query: Annotated[
        int | None, Query(alias="last_event_id", ge=0, le=SQL_INT_MAX)
    ] = None,
    last_event_id_header: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """Events after Last-Event-ID (header or query); without one, only events from now on."""
    after: int | None = last_event_id_query
    header = (last_event_id_header or "").strip()
    # isdigit() alone admits "²", which int() refuses; an out-of-range id would overflow SQLite.
    if header.isascii() and header.isdigit() and int(header) <= SQL_INT_MAX:
        after = int(header)
    if after is None:
        after = await to_thread.run_sync(lambda: last_event_id(backend.store.connection()))
    return StreamingResponse(
        _stream(request, backend, principal, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/log", response_model=EventPage)
def event_log(
    backend: BackendDep,
    _: PrincipalDep,
    after: Annotated[int, Query(ge=0, le=SQL_INT_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=BATCH)] = 100,
) -> EventPage:
    """The event log for clients that cannot stream (polling fallback)."""
    conn = backend.store.connection()
    items = read_events(conn, after, limit)
    return EventPage(items=items, last_id=items[-1].id if items else max(after, 0))
