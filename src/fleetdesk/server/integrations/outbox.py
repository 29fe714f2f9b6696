"""A durable outbox for outbound pages: stored before the first try, retried until delivered.

A delivery that fails (Alertmanager down, a webhook receiver failing) is never
dropped: it stays in a table of the store (``store/outbox_rows.py``) and a background thread retries it with
full-jitter exponential backoff, across restarts, until it goes through. With several replicas on one
database each runs that thread, and each due delivery is claimed by one of them for its try, so a delivery
queued by a replica that died is sent by another, once. Every try's outcome goes to the listeners, so the
server can show it on the incident.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from fleetdesk.server.integrations.answers import AnswerTooLarge, post_bounded
from fleetdesk.server.store import StoreError, outbox_rows

if TYPE_CHECKING:
    from fleetdesk.server.store import Store
    from fleetdesk.server.store.contract import Connection
    from fleetdesk.server.store.outbox_rows import OutboxRow

log = logging.getLogger("fleetdesk.server.integrations")

FIRST_TRY_GRACE = 60.0
"""Seconds after which a stored or claimed delivery whose try never reported back (crash) is retried."""
CLAIM_BATCH = 4
"""Deliveries claimed at a time: their tries (5 s timeouts) end well within FIRST_TRY_GRACE, so no claim runs
out while its replica is still on it."""


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
        store: Store,
        target: str,
        deliver: Deliver,
        backoff: RetryBackoff | None = None,
        rng: random.Random | None = None,
        sweep: Sweep | None = None,
        sweep_interval: float = 2.0,
    ) -> None:
        self.store = store
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
    ) -> OutboxEntry | None:
        """Store the delivery, then try it once now; a failure leaves it queued for retry. None for a follow-up
        (``about_id``) that its delivery already has: another replica's sweep stored it first."""
        entry = self._insert(kind, about_id, model_id, incident_id, description, payload)
        return None if entry is None else self._attempt(entry)

    def pending(self) -> list[OutboxEntry]:
        """Deliveries not through yet, oldest first."""
        return [_entry(row) for row in outbox_rows.undelivered(self._conn(), self.target)]

    def for_incident(self, incident_id: int) -> list[OutboxEntry]:
        """Every delivery made for one incident, oldest first."""
        return [
            _entry(row) for row in outbox_rows.of_incident(self._conn(), self.target, incident_id)
        ]

    def unfollowed(self, kind: str) -> list[OutboxRow]:
        """Deliveries of ``kind`` whose incident resolved and that nothing followed up yet: (id, incident_id,
        model_id, description, payload) each."""
        return outbox_rows.unresolved_pages(self._conn(), self.target, kind)

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
            try:
                if self._retry_due():
                    continue  # a full claim: more may be due now
                wait = self._seconds_to_next_pass()
            except StoreError as error:
                # The database is away (a PostgreSQL restart): nothing is lost, the rows wait there.
                log.warning(
                    "outbox %s: cannot read its deliveries now (%s); retrying", self.target, error
                )
                wait = self._sweep_interval
            self._wake.wait(timeout=wait)
            self._wake.clear()

    def _retry_due(self) -> bool:
        """One pass: the sweep, then the deliveries due now that this replica claims; whether more may be due."""
        if self._sweep is not None:
            self._sweep()
        now = _now()
        due = [
            _entry(row)
            for row in outbox_rows.claim_due(
                self._conn(),
                self.target,
                _iso(now),
                _iso(now + timedelta(seconds=FIRST_TRY_GRACE)),
                CLAIM_BATCH,
            )
        ]
        for index, entry in enumerate(due):
            if self._stopping.is_set():
                # Handed back, not left to run out: the next run or another replica tries them at once.
                outbox_rows.release(self._conn(), [left.id for left in due[index:]], _iso(now))
                return False
            self._attempt(entry)
        return len(due) == CLAIM_BATCH

    def _seconds_to_next_pass(self) -> float:
        # Every sweep_interval at least: the sweep runs then, and so does a look for what other replicas queued.
        wait = self._seconds_to_next()
        return self._sweep_interval if wait is None else min(wait, self._sweep_interval)

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
                updated = _entry(outbox_rows.delivered(self._conn(), entry.id, _iso(now)))
            else:
                retry_at = now + timedelta(
                    seconds=self.backoff.delay(entry.attempts + 1, self._rng)
                )
                updated = _entry(outbox_rows.failed(self._conn(), entry.id, _iso(retry_at), error))
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
    ) -> OutboxEntry | None:
        now = _now()
        # The first try follows at once; a retry thread (this replica's or another's) only takes the entry
        # over if that try never reports back (the process died mid-try).
        row = outbox_rows.insert(
            self._conn(),
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
        return None if row is None else _entry(row)

    def _conn(self) -> Connection:
        # This thread's connection outside any transaction: each outbox statement commits on its own.
        return self.store.connection()

    def _seconds_to_next(self) -> float | None:
        earliest = outbox_rows.next_attempt_at(self._conn(), self.target)
        if earliest is None:
            return None
        return max((datetime.fromisoformat(earliest) - _now()).total_seconds(), 0.0)


def _now() -> datetime:
    # Retry timing follows the wall clock, never the server's (possibly frozen) clock.
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    """Fixed-width UTC text, so SQLite's text order is time order."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _entry(row: OutboxRow) -> OutboxEntry:
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
