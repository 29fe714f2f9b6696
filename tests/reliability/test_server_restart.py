"""SIGKILL of a real `fleetdesk serve` under a live client: nothing acknowledged is lost, nothing applied twice.

tests/server/test_durability.py already kills the server under raw HTTP writers; here the real client is on
the other side: its live feed must come back by itself and deliver every event once, and intents whose
outcome it could not confirm must be safe to send again after the restart.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleetdesk.client import (
    ActionIntent,
    ClientTimeouts,
    ConnectionState,
    ConnectionUpdate,
    EventStreamPolicy,
    EventUpdate,
    FleetdeskClient,
    FleetdeskError,
    PageRequest,
    RetryPolicy,
    Update,
)
from fleetdesk.wire import ActionEventData, ActionKind
from ports import free_port
from serve_process import ServeProcess, admin_token

MODEL = "ig_feed_late-stage_mtml.v41"
TIMEOUTS = ClientTimeouts(connect=1, read=5, write=5, pool=2, deadline=3, stream_idle=30)
RETRY = RetryPolicy(attempts=2, base_delay=0.02, max_delay=0.1)
STREAM = EventStreamPolicy(reconnect_base=0.05, reconnect_max=0.3, poll_after_failures=1000)
SENDERS = 4
MAX_PER_SENDER = 200


class Feed:
    """Collects a client's live updates in a task; ``wait`` polls a condition with a deadline."""

    def __init__(self, client: FleetdeskClient) -> None:
        self.updates: list[Update] = []
        self._task = asyncio.create_task(self._run(client))

    async def _run(self, client: FleetdeskClient) -> None:
        async for update in client.events():
            self.updates.append(update)

    def states(self) -> list[ConnectionState]:
        return [u.state for u in self.updates if isinstance(u, ConnectionUpdate)]

    def action_keys(self) -> list[str]:
        return [
            u.data.audit.idempotency_key
            for u in self.updates
            if isinstance(u, EventUpdate) and isinstance(u.data, ActionEventData)
        ]

    async def wait(self, condition: Callable[[], bool], what: str, deadline: float = 20) -> None:
        give_up = time.monotonic() + deadline
        while not condition():
            if self._task.done() or time.monotonic() > give_up:
                raise AssertionError(f"timed out waiting for {what}; updates: {self.updates[-5:]}")
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[ServeProcess, str]]:
    db = tmp_path / "fleetdesk.sqlite"
    token = admin_token(db)
    server = ServeProcess(db, free_port(), "--fleet", "small").start()
    yield server, token
    server.stop()


async def test_killed_and_restarted_server_under_live_feed_and_in_flight_actions(
    served: tuple[ServeProcess, str],
) -> None:
    server, token = served
    async with FleetdeskClient(
        server.url, SecretStr(token), timeouts=TIMEOUTS, retry=RETRY, stream=STREAM
    ) as client:
        feed = Feed(client)
        try:
            await feed.wait(lambda: ConnectionState.LIVE in feed.states(), "the live stream")
            intents: list[ActionIntent] = []
            acknowledged: list[str] = []
            unconfirmed: list[ActionIntent] = []

            async def sender(worker: int) -> None:
                # Sends until the server dies under it, so each sender ends with one intent it could not confirm.
                for n in range(MAX_PER_SENDER):
                    intent = ActionIntent.of(ActionKind.NOTE, MODEL, text=f"note {worker}.{n}")
                    intents.append(intent)
                    try:
                        await client.perform(intent)
                    except FleetdeskError:
                        unconfirmed.append(intent)
                        return
                    acknowledged.append(intent.idempotency_key)

            sending = [asyncio.create_task(sender(worker)) for worker in range(SENDERS)]
            await feed.wait(lambda: len(acknowledged) >= 10, "the first acknowledged actions")
            server.kill()  # with actions in flight
            await asyncio.gather(*sending)
            await feed.wait(
                lambda: feed.states()[-1] is ConnectionState.RECONNECTING, "the feed to notice"
            )
            assert len(unconfirmed) == SENDERS, "a sender outlived the server"

            server.start()  # same database, same port
            await feed.wait(
                lambda: feed.states()[-1] is ConnectionState.LIVE, "the feed to come back"
            )
            # Sending each unconfirmed intent again is safe: the same key, so at most once in total.
            for intent in unconfirmed:
                await client.perform(intent)
            everything = {intent.idempotency_key for intent in intents}
            await feed.wait(lambda: set(feed.action_keys()) == everything, "every action event")

            audit = await client.audit(model_id=MODEL, page=PageRequest(limit=1000))
            records = Counter(record.idempotency_key for record in audit.items)
            assert (
                audit.total == len(intents)
                and set(records) == everything
                and max(records.values()) == 1
            )
            events = Counter(feed.action_keys())
            assert max(events.values()) == 1, "the feed delivered an event twice across the restart"
            ids = [u.event.id for u in feed.updates if isinstance(u, EventUpdate)]
            assert ids == sorted(set(ids)), "event ids repeat or go backwards"
        finally:
            await feed.close()
