"""The event log behind ``/v1/events``: append inside write transactions, wake streams after commit."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime

from pydantic import BaseModel

from fleetdesk.server.store import Connection, event_log, iso, parse_iso
from fleetdesk.wire import EventType, ServerEvent


def append_event(
    conn: Connection, kind: EventType, at: datetime, model_id: str | None, data: BaseModel
) -> int:
    """Record one event in the current transaction; returns its id (the SSE id)."""
    return event_log.append(conn, kind.value, iso(at), model_id, data.model_dump_json())


def read_events(conn: Connection, after: int, limit: int) -> list[ServerEvent]:
    return [
        ServerEvent(
            id=row["id"],
            type=EventType(row["type"]),
            at=parse_iso(row["at"]),
            model_id=row["model_id"],
            data=json.loads(row["payload"]),
        )
        for row in event_log.rows_after(conn, after, limit)
    ]


class EventNotifier:
    """Wakes waiting event streams (on the server's event loop) from any writer thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Event]:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(waiter)
        return waiter

    def unsubscribe(self, waiter: tuple[asyncio.AbstractEventLoop, asyncio.Event]) -> None:
        with self._lock:
            self._waiters.discard(waiter)

    def notify(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass  # that loop has closed; its stream is gone
