"""A durable outbox for outbound pages: stored before the first try, retried until delivered.

A page that could not be delivered (Alertmanager down, webhook receiver
failing) is never dropped: it stays in a SQLite table and a background task
retries it with full-jitter exponential backoff, across restarts, until it
goes through. Each try's outcome is reported to a listener so the server can
record it on the incident's timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

_SCHEMA = """
CREATE TABLE IF NOT EXISTS integration_outbox (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    incident_id INTEGER,
    model_id TEXT NOT NULL,
    description TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS integration_outbox_due
    ON integration_outbox (target, next_attempt_at) WHERE delivered_at IS NULL;
"""

FIRST_TRY_GRACE = 60.0
"""Seconds after which a stored delivery whose first try never finished is retried."""


class RetryBackoff(BaseModel):
    """Full-jitter exponential backoff; retries never stop, they only slow down to ``max_delay``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_delay: float = Field(default=1.0, gt=0.0, description="Seconds before the first retry (upper bound)")
    max_delay: float = Field(default=60.0, gt=0.0, description="Longest wait between retries")

    def delay(self, failures: int, rng: random.Random) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2 ** min(failures - 1, 32))
        return rng.uniform(ceiling / 10, ceiling)


class OutboxEntry(BaseModel):
    """One outbound delivery and where it stands."""

    model_config = ConfigDict(frozen=True)

    id: int
    target: str
    incident_id: int | None
    model_id: str
    description: str = Field(description="What is being sent, in plain words (for timelines)")
    payload: Any
    created_at: AwareDatetime
    attempts: int
    next_attempt_at: AwareDatetime
    last_error: str | None
    delivered_at: AwareDatetime | None


class DeliveryFailed(Exception):
    """A delivery try failed; the message says why in plain words (no secrets)."""


Deliver = Callable[[Any], Awaitable[None]]
OutcomeListener = Callable[[OutboxEntry, str | None], Awaitable[None]]
"""Called after every try: the entry as it stands now, and the error (None when delivered)."""


class Outbox:
    """Durable deliveries for one target, with a retry task started by ``start``."""

    def __init__(
        self,
        db_path: Path,
        target: str,
        deliver: Deliver,
        backoff: RetryBackoff | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.db_path = db_path
        self.target = target
        self._deliver = deliver
        self.backoff = backoff or RetryBackoff()
        self._rng = rng or random.Random()
        self._listeners: list[OutcomeListener] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # The first try (from send) and the retry loop must never send the same entry at once.
        self._in_flight: set[int] = set()
        with contextlib.closing(self._connect()) as db:
            db.executescript(_SCHEMA)

    def add_listener(self, listener: OutcomeListener) -> None:
        self._listeners.append(listener)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.db_path, timeout=10.0, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db

    async def send(self, model_id: str, incident_id: int | None, description: str, payload: Any) -> OutboxEntry:
        """Store the delivery, then try it once now; a failure leaves it queued for retry."""
        entry = await asyncio.to_thread(self._insert, model_id, incident_id, description, payload)
        return await self._attempt(entry)

    def pending(self) -> list[OutboxEntry]:
        """Deliveries not yet through, oldest first."""
        with contextlib.closing(self._connect()) as db:
            rows = db.execute(
                "SELECT * FROM integration_outbox WHERE target = ? AND delivered_at IS NULL ORDER BY id",
                (self.target,),
            ).fetchall()
        return [_entry(row) for row in rows]

    def get(self, entry_id: int) -> OutboxEntry:
        with contextlib.closing(self._connect()) as db:
            row = db.execute("SELECT * FROM integration_outbox WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise KeyError(entry_id)
        return _entry(row)

    def start(self) -> None:
        """Start retrying due deliveries in the background (also those left by an earlier run)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._retry_loop(), name=f"outbox-{self.target}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _retry_loop(self) -> None:
        while True:
            due = await asyncio.to_thread(self._due, datetime.now(UTC))
            for entry in due:
                await self._attempt(entry)
            wait = await asyncio.to_thread(self._seconds_to_next, datetime.now(UTC))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    async def _attempt(self, entry: OutboxEntry) -> OutboxEntry:
        if entry.id in self._in_flight:
            return entry
        self._in_flight.add(entry.id)
        error: str | None = None
        try:
            await self._deliver(entry.payload)
        except DeliveryFailed as failure:
            error = str(failure)
        finally:
            self._in_flight.discard(entry.id)
        now = datetime.now(UTC)
        if error is None:
            updated = await asyncio.to_thread(self._mark_delivered, entry.id, now)
        else:
            delay = self.backoff.delay(entry.attempts + 1, self._rng)
            updated = await asyncio.to_thread(self._mark_failed, entry.id, now, now + timedelta(seconds=delay), error)
            self._wake.set()
        for listener in self._listeners:
            await listener(updated, error)
        return updated

    def _insert(self, model_id: str, incident_id: int | None, description: str, payload: Any) -> OutboxEntry:
        now = datetime.now(UTC)
        # The first try happens right after this; the retry loop only takes the
        # entry over if that try never reports back (e.g. the process died).
        unclaimed_after = now + timedelta(seconds=FIRST_TRY_GRACE)
        with contextlib.closing(self._connect()) as db:
            cursor = db.execute(
                "INSERT INTO integration_outbox (target, incident_id, model_id, description, payload, created_at,"
                " next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *",
                (self.target, incident_id, model_id, description, json.dumps(payload), _iso(now),
                 _iso(unclaimed_after)),
            )
            return _entry(cursor.fetchone())

    def _mark_delivered(self, entry_id: int, now: datetime) -> OutboxEntry:
        with contextlib.closing(self._connect()) as db:
            row = db.execute(
                "UPDATE integration_outbox SET attempts = attempts + 1, delivered_at = ?, last_error = NULL"
                " WHERE id = ? RETURNING *",
                (_iso(now), entry_id),
            ).fetchone()
        return _entry(row)

    def _mark_failed(self, entry_id: int, now: datetime, retry_at: datetime, error: str) -> OutboxEntry:
        with contextlib.closing(self._connect()) as db:
            row = db.execute(
                "UPDATE integration_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?"
                " WHERE id = ? RETURNING *",
                (_iso(retry_at), error, entry_id),
            ).fetchone()
        return _entry(row)

    def _due(self, now: datetime) -> list[OutboxEntry]:
        with contextlib.closing(self._connect()) as db:
            rows = db.execute(
                "SELECT * FROM integration_outbox WHERE target = ? AND delivered_at IS NULL"
                " AND next_attempt_at <= ? ORDER BY id",
                (self.target, _iso(now)),
            ).fetchall()
        return [_entry(row) for row in rows]

    def _seconds_to_next(self, now: datetime) -> float | None:
        with contextlib.closing(self._connect()) as db:
            row = db.execute(
                "SELECT MIN(next_attempt_at) FROM integration_outbox WHERE target = ? AND delivered_at IS NULL"
                " AND attempts > 0",
                (self.target,),
            ).fetchone()
        if row[0] is None:
            return None
        return max((datetime.fromisoformat(row[0]) - now).total_seconds(), 0.0)


def _iso(moment: datetime) -> str:
    """Fixed-width UTC text, so SQLite's text order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _entry(row: tuple[Any, ...]) -> OutboxEntry:
    (entry_id, target, incident_id, model_id, description, payload, created_at, attempts, next_attempt_at,
     last_error, delivered_at) = row
    return OutboxEntry(
        id=entry_id,
        target=target,
        incident_id=incident_id,
        model_id=model_id,
        description=description,
        payload=json.loads(payload),
        created_at=datetime.fromisoformat(created_at),
        attempts=attempts,
        next_attempt_at=datetime.fromisoformat(next_attempt_at),
        last_error=last_error,
        delivered_at=datetime.fromisoformat(delivered_at) if delivered_at else None,
    )
