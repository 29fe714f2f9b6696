"""A durable outbox for outbound pages: stored before the first try, retried until delivered.

A delivery that fails (Alertmanager down, a webhook receiver failing) is never
dropped: it stays in a SQLite table (``store/outbox_rows.py``) and a background thread retries it with
full-jitter exponential backoff, across restarts, until it goes through. Every
try's outcome goes to the listeners, so the server can show it on the incident.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from fleetdesk.server.integrations.answers import AnswerTooLarge, post_bounded
from fleetdesk.server.store import outbox_rows

FIRST_TRY_GRACE = 60.0
"""Seconds after which a stored delivery whose first try never reported back (crash) is retried."""


class RetryBackoff(BaseModel):
    """Full-jitter exponential backoff; retries never stop, they only slow down to ``max_delay``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_delay: float = Field(
        default=1.0, gt=0.0, description="Seconds before the first retry (upper bound)"
    )
    max_delay: float = Field(default=60.0, gt=0.0, description="Longest wait between retries")

    def delay(self, failures: int, rng: random.Random) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2 ** min(failures - 1, 32))
        return rng.uniform(0.0, ceiling)


class OutboxEntry(BaseModel):
    """One outbound delivery and where it stands."""

    model_config = ConfigDict(frozen=True)

    id: int
    target: str
    kind: str = Field(description="What the delivery does, e.g. 'page' or 'resolve'")
    about_id: int | None = Field(
        description="The earlier delivery this one follows up (a resolve's page)"
    )
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


def post(http: httpx.Client, url: str, **request: Any) -> httpx.Response:
    """POST one delivery try; a network failure becomes DeliveryFailed in plain words."""
    try:
        return post_bounded(http, url, **request)
    except AnswerTooLarge as error:
        raise DeliveryFailed(str(error)) from None
    except httpx.TimeoutException:
        raise DeliveryFailed("timed out") from None
    except httpx.ConnectError:
        raise DeliveryFailed("connection refused or host unreachable") from None
    except httpx.TransportError as error:
        raise DeliveryFailed(f"network error ({type(error).__name__})") from None


Deliver = Callable[["OutboxEntry"], None]
Sweep = Callable[[], None]
OutcomeListener = Callable[[OutboxEntry, str | None], None]
"""Called after every try with the entry as it stands and the error (None when delivered)."""


class Outbox:
    """Durable deliveries for one target; ``start`` runs the retry thread."""

    def __init__(
        self,
        db_path: Path | str,
        target: str,
        deliver: Deliver,
        backoff: RetryBackoff | None = None,
        rng: random.Random | None = None,
        sweep: Sweep | None = None,
        sweep_interval: float = 2.0,
    ) -> None:
        self.db_path = Path(db_path)
        self.target = target
        self._deliver = deliver
        self._sweep = sweep
        self._sweep_interval = sweep_interval
        self.backoff = backoff or RetryBackoff()
        self._rng = rng or random.Random()
        self._listeners: list[OutcomeListener] = []
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        # The first try (from send) and the retry thread never send one entry at once.
        self._in_flight: set[int] = set()
        self._in_flight_lock = threading.Lock()
        outbox_rows.create(self.db_path)

    def add_listener(self, listener: OutcomeListener) -> None:
        self._listeners.append(listener)

    def send(
        self,
        kind: str,
        model_id: str,
        incident_id: int | None,
        description: str,
        payload: Any,
        about_id: int | None = None,
    ) -> OutboxEntry:
        """Store the delivery, then try it once now; a failure leaves it queued for retry."""
        return self._attempt(
            self._insert(kind, about_id, model_id, incident_id, description, payload)
        )

    def pending(self) -> list[OutboxEntry]:
        """Deliveries not through yet, oldest first."""
        with outbox_rows.connect(self.db_path) as db:
            return [_entry(row) for row in outbox_rows.undelivered(db, self.target)]

    def for_incident(self, incident_id: int) -> list[OutboxEntry]:
        """Every delivery made for one incident, oldest first."""
        with outbox_rows.connect(self.db_path) as db:
            return [_entry(row) for row in outbox_rows.of_incident(db, self.target, incident_id)]

    def start(self) -> None:
        """Retry due deliveries in a background thread (also those left by an earlier run)."""
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(
                target=self._retry_loop, name=f"outbox-{self.target}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stopping.set()
            self._wake.set()
            self._thread.join(timeout=30.0)
            self._thread = None

    def _retry_loop(self) -> None:
        while not self._stopping.is_set():
            if self._sweep is not None:
                self._sweep()
            with outbox_rows.connect(self.db_path) as db:
                due = [_entry(row) for row in outbox_rows.due(db, self.target, _iso(_now()))]
            for entry in due:
                if self._stopping.is_set():
                    return
                self._attempt(entry)
            wait = self._seconds_to_next()
            if self._sweep is not None:
                wait = self._sweep_interval if wait is None else min(wait, self._sweep_interval)
            self._wake.wait(timeout=wait)
            self._wake.clear()

    def _attempt(self, entry: OutboxEntry) -> OutboxEntry:
        with self._in_flight_lock:
            if entry.id in self._in_flight:
                return entry
            self._in_flight.add(entry.id)
        try:
            error: str | None = None
            try:
                self._deliver(entry)
            except DeliveryFailed as failure:
                error = str(failure)
            now = _now()
            if error is None:
                with outbox_rows.connect(self.db_path) as db:
                    updated = _entry(outbox_rows.delivered(db, entry.id, _iso(now)))
            else:
                retry_at = now + timedelta(
                    seconds=self.backoff.delay(entry.attempts + 1, self._rng)
                )
                with outbox_rows.connect(self.db_path) as db:
                    updated = _entry(outbox_rows.failed(db, entry.id, _iso(retry_at), error))
                self._wake.set()
        finally:
            with self._in_flight_lock:
                self._in_flight.discard(entry.id)
        for listener in self._listeners:
            listener(updated, error)
        return updated

    def _insert(
        self,
        kind: str,
        about_id: int | None,
        model_id: str,
        incident_id: int | None,
        description: str,
        payload: Any,
    ) -> OutboxEntry:
        now = _now()
        # The first try follows at once; the retry thread only takes the entry
        # over if that try never reports back (the process died mid-try).
        with outbox_rows.connect(self.db_path) as db:
            row = outbox_rows.insert(
                db,
                self.target,
                kind,
                about_id,
                incident_id,
                model_id,
                description,
                json.dumps(payload),
                _iso(now),
                _iso(now + timedelta(seconds=FIRST_TRY_GRACE)),
            )
        return _entry(row)

    def _seconds_to_next(self) -> float | None:
        with outbox_rows.connect(self.db_path) as db:
            earliest = outbox_rows.next_attempt_at(db, self.target)
        if earliest is None:
            return None
        return max((datetime.fromisoformat(earliest) - _now()).total_seconds(), 0.0)


def _now() -> datetime:
    # Retry timing follows the wall clock, never the server's (possibly frozen) clock.
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    """Fixed-width UTC text, so SQLite's text order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _entry(row: tuple[Any, ...]) -> OutboxEntry:
    (
        entry_id,
        target,
        kind,
        about_id,
        incident_id,
        model_id,
        description,
        payload,
        created_at,
        attempts,
        next_attempt_at,
        last_error,
        delivered_at,
    ) = row
    return OutboxEntry(
        id=entry_id,
        target=target,
        kind=kind,
        about_id=about_id,
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
