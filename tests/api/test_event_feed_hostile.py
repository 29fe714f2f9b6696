"""The live feed against a broken stream: malformed events are skipped and counted, drops resume."""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime

from pydantic import SecretStr

from fleetdesk.client import (
    ClientTimeouts,
    ConnectionState,
    ConnectionUpdate,
    EventStreamPolicy,
    EventUpdate,
    FleetdeskClient,
)
from fleetdesk.wire import ClockEventData, EventType, ServerEvent

from .rawserver import RawRequest, RawServer

AT = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
FAST_STREAM = EventStreamPolicy(
    reconnect_base=0.01, reconnect_max=0.05, poll_after_failures=3, poll_interval=0.05
)


def clock_event(event_id: int) -> str:
    event = ServerEvent(
        id=event_id,
        type=EventType.CLOCK,
        at=AT,
        model_id=None,
        data=ClockEventData(now=AT).model_dump(mode="json"),
    )
    return event.model_dump_json()


FIRST = (
    ": heartbeat\n\n"
    f"id: 1\nevent: clock\ndata: {clock_event(1)}\n\n"
    "id: 2\nevent: clock\ndata: {not json\n\n"
    'id: 3\ndata: {"id": 3, "type": "no.such.type", "at": "2026-12-03T08:00:00Z", "model_id": null, "data": {}}\n\n'
    "id: 4\nevent: action\ndata: "
    + json.dumps(
        {
            "id": 4,
            "type": "action",
            "at": "2026-12-03T08:00:00Z",
            "model_id": None,
            "data": {"x": 1},
        }
    )
    + "\n\n"
    f"id: 5\nevent: clock\ndata: {clock_event(5)}\n\n"
)
# After the reconnect the server repeats event 5: the feed must not deliver it twice.
SECOND = f"id: 5\ndata: {clock_event(5)}\n\nid: 6\ndata: {clock_event(6)}\n\n"


async def test_malformed_events_are_counted_and_resume_skips_repeats() -> None:
    connections: list[RawRequest] = []

    async def stream(request: RawRequest, writer: asyncio.StreamWriter) -> None:
        connections.append(request)
        body = FIRST if len(connections) == 1 else SECOND
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        )
        writer.write(body.encode())
        await writer.drain()
        if len(connections) == 1:
            writer.close()  # drop mid-stream
        else:
            await asyncio.Event().wait()

    async with (
        RawServer(stream) as raw,
        FleetdeskClient(
            raw.url, SecretStr("t"), timeouts=ClientTimeouts(deadline=2), stream=FAST_STREAM
        ) as client,
    ):
        feed = client.events()
        seen: list[EventUpdate | ConnectionUpdate] = []
        async with asyncio.timeout(5):
            async for update in feed:
                seen.append(update)
                if isinstance(update, EventUpdate) and update.event.id == 6:
                    break
        await feed.aclose()

    events = [u.event.id for u in seen if isinstance(u, EventUpdate)]
    states = [u.state for u in seen if isinstance(u, ConnectionUpdate)]
    assert events == [1, 5, 6]
    assert states == [ConnectionState.LIVE, ConnectionState.RECONNECTING, ConnectionState.LIVE]
    assert feed.malformed == 3
    assert feed.last_event_id == 6
    assert "last-event-id" not in connections[0].headers
    assert connections[1].headers["last-event-id"] == "5"
    assert all(isinstance(u.data, ClockEventData) for u in seen if isinstance(u, EventUpdate))


async def test_repeated_refused_connections_fall_back_to_polling_and_say_why() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    timeouts = ClientTimeouts(connect=0.5, deadline=0.5)
    async with FleetdeskClient(
        f"http://127.0.0.1:{port}", SecretStr("t"), timeouts=timeouts, stream=FAST_STREAM
    ) as client:
        feed = client.events()
        states: list[ConnectionUpdate] = []
        async with asyncio.timeout(10):
            async for update in feed:
                assert isinstance(update, ConnectionUpdate)
                states.append(update)
                if "polling failed" in update.detail:
                    break
        await feed.aclose()
    assert [u.state for u in states] == [ConnectionState.RECONNECTING] * (
        FAST_STREAM.poll_after_failures - 1
    ) + [ConnectionState.POLLING, ConnectionState.POLLING]
    assert "cannot reach the server" in states[-1].detail
