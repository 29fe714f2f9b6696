"""The live feed against the real server: stream, resume with Last-Event-ID, and the polling fallback."""

from __future__ import annotations

import asyncio

import pytest

from fleetdesk.client import (
    ActionIntent,
    ConnectionState,
    ConnectionUpdate,
    EventFeed,
    EventStreamPolicy,
    EventUpdate,
    FleetdeskClient,
    Unauthorized,
    Update,
)
from fleetdesk.wire import ActionEventData, ActionKind, EventType, IncidentEventData

from .conftest import EXPERIMENT, Connect
from .transports import BlockStream, CutStream

QUICK = EventStreamPolicy(reconnect_base=0.01, reconnect_max=0.05, poll_interval=0.05)
WAIT = 10


async def next_update(feed: EventFeed, kind: type[Update] = EventUpdate) -> Update:  # type: ignore[valid-type]
    """The next update of ``kind`` (ConnectionUpdates are skipped unless asked for)."""
    async with asyncio.timeout(WAIT):
        async for update in feed:
            if isinstance(update, kind):
                return update
    raise AssertionError("the feed ended")


async def collect_until(feed: EventFeed, last_id: int) -> list[Update]:
    seen: list[Update] = []
    async with asyncio.timeout(WAIT):
        async for update in feed:
            seen.append(update)
            if isinstance(update, EventUpdate) and update.event.id >= last_id:
                return seen
    raise AssertionError("the feed ended")


async def newest_id(client: FleetdeskClient) -> int:
    return (await client.event_log(limit=500)).last_id


async def test_live_stream_delivers_an_action_as_typed_events(connect: Connect) -> None:
    watcher = await connect("viewer", stream=QUICK)
    actor = await connect("oncall")
    feed = watcher.events()
    try:
        first = await next_update(feed, ConnectionUpdate)
        assert isinstance(first, ConnectionUpdate) and first.state is ConnectionState.LIVE
        result = await actor.perform(
            ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="from the stream test")
        )
        seen = await collect_until(feed, result.event_id or 0)
    finally:
        await feed.aclose()
    events = [u for u in seen if isinstance(u, EventUpdate)]
    assert all(u.via == "stream" for u in events)
    action = events[-1]
    assert action.event.type is EventType.ACTION and isinstance(action.data, ActionEventData)
    assert action.data.audit.id == result.audit_id and action.data.result.summary == result.summary
    incident = [u for u in events if u.event.type is EventType.INCIDENT_UPDATED]
    assert incident and isinstance(incident[0].data, IncidentEventData)
    assert feed.malformed == 0 and feed.last_event_id == result.event_id


async def test_resume_with_last_event_id_gets_exactly_what_was_missed(connect: Connect) -> None:
    client = await connect("admin", stream=QUICK)
    start = await newest_id(client)
    missed = [
        await client.perform(ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text=f"while away {n}"))
        for n in range(3)
    ]
    expected = [e.id for e in (await client.event_log(after=start)).items]
    assert len(expected) >= 3

    feed = client.events(last_event_id=start)
    try:
        seen = await collect_until(feed, expected[-1])
    finally:
        await feed.aclose()
    assert [u.event.id for u in seen if isinstance(u, EventUpdate)] == expected
    audits = [
        u.data.audit.id
        for u in seen
        if isinstance(u, EventUpdate) and isinstance(u.data, ActionEventData)
    ]
    assert audits == [r.audit_id for r in missed]


async def test_a_dropped_stream_resumes_after_the_last_event_without_gaps_or_repeats(
    connect: Connect,
) -> None:
    network = CutStream(events=2)
    client = await connect("admin", stream=QUICK, transport=network)
    start = await newest_id(client)
    feed = client.events(last_event_id=start)
    try:
        assert (await next_update(feed, ConnectionUpdate)).state is ConnectionState.LIVE  # type: ignore[union-attr]
        for n in range(3):
            await client.perform(ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text=f"note {n}"))
        expected = [e.id for e in (await client.event_log(after=start)).items]
        seen = await collect_until(feed, expected[-1])
    finally:
        await feed.aclose()
    assert [u.event.id for u in seen if isinstance(u, EventUpdate)] == expected
    states = [u.state for u in seen if isinstance(u, ConnectionUpdate)]
    assert states == [ConnectionState.RECONNECTING, ConnectionState.LIVE]
    assert len(network.stream_requests) == 2
    assert network.stream_requests[0].headers["last-event-id"] == str(start)
    assert network.stream_requests[1].headers["last-event-id"] == str(expected[1])


async def test_without_a_stream_the_feed_polls_the_event_log(connect: Connect) -> None:
    proxy = BlockStream()
    watcher = await connect("viewer", stream=QUICK, transport=proxy)
    actor = await connect("oncall")
    feed = watcher.events()
    try:
        status = await next_update(feed, ConnectionUpdate)
        assert isinstance(status, ConnectionUpdate) and status.state is ConnectionState.POLLING
        assert "no event stream" in status.detail
        result = await actor.perform(
            ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="seen by polling")
        )
        seen = await collect_until(feed, result.event_id or 0)
    finally:
        await feed.aclose()
    events = [u for u in seen if isinstance(u, EventUpdate)]
    assert events and all(u.via == "poll" for u in events)
    assert (
        isinstance(events[-1].data, ActionEventData) and events[-1].data.audit.id == result.audit_id
    )
    assert proxy.blocked == 1  # a 404 means no stream here: straight to polling, no hammering


async def test_a_refused_token_ends_the_feed_with_unauthorized(connect: Connect) -> None:
    client = await connect(None, token="fdk_wrong", stream=QUICK)
    feed = client.events()
    with pytest.raises(Unauthorized):
        await next_update(feed)


async def test_polling_feed_returns_to_the_stream_once_it_is_back(connect: Connect) -> None:
    proxy = BlockStream()
    policy = QUICK.model_copy(update={"stream_recheck": 0.2})
    watcher = await connect("viewer", stream=policy, transport=proxy)
    actor = await connect("oncall")
    feed = watcher.events()
    try:
        assert (await next_update(feed, ConnectionUpdate)).state is ConnectionState.POLLING  # type: ignore[union-attr]
        proxy.blocking = False
        back = await next_update(feed, ConnectionUpdate)
        assert isinstance(back, ConnectionUpdate) and back.state is ConnectionState.LIVE
        result = await actor.perform(
            ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="seen live again")
        )
        seen = await collect_until(feed, result.event_id or 0)
    finally:
        await feed.aclose()
    assert [u.via for u in seen if isinstance(u, EventUpdate)][-1] == "stream"


async def test_a_stream_dropped_before_any_event_resumes_where_it_started(connect: Connect) -> None:
    network = CutStream(events=0)
    watcher = await connect("viewer", stream=QUICK, transport=network)
    actor = await connect("oncall")
    start = await newest_id(actor)
    feed = watcher.events()  # no position: "from now"
    try:
        assert (await next_update(feed, ConnectionUpdate)).state is ConnectionState.LIVE  # type: ignore[union-attr]
        assert (await next_update(feed, ConnectionUpdate)).state is ConnectionState.RECONNECTING  # type: ignore[union-attr]
        # While the feed is away, something happens: it must not be lost on reconnect.
        result = await actor.perform(
            ActionIntent.of(ActionKind.NOTE, EXPERIMENT, text="while reconnecting")
        )
        seen = await collect_until(feed, result.event_id or 0)
    finally:
        await feed.aclose()
    assert network.stream_requests[1].headers["last-event-id"] == str(start)
    assert result.audit_id in [
        u.data.audit.id
        for u in seen
        if isinstance(u, EventUpdate) and isinstance(u.data, ActionEventData)
    ]
