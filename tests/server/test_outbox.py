"""The outbox on each store: replicas sharing one outbox never try the same delivery at once, and a delivery
has one follow-up however many replicas sweep for it (tests/reliability/test_replicas.py runs it end to end)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fleetdesk.server.integrations.outbox import DeliveryFailed, Outbox, OutboxEntry, RetryBackoff
from fleetdesk.server.store import Store, outbox_rows
from postgres_cluster import Cluster

TARGET = "alertmanager"
FAST = RetryBackoff(base_delay=0.05, max_delay=0.2)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def _queued(store: Store, count: int) -> list[int]:
    """``count`` deliveries whose next try is due (first tries that failed), their ids."""
    past = _iso(datetime.now(UTC) - timedelta(seconds=5))
    ids = []
    for number in range(count):
        row = outbox_rows.insert(
            store.connection(), TARGET, "page", None, None, "m", f"page {number}", "{}", past, past
        )
        assert row is not None
        ids.append(row[0])
    return ids


def _replicas(new_database: Callable[[], Path | str], count: int) -> list[Store]:
    """``count`` stores on one new database: each replica's own connections."""
    where = new_database()
    stores = [Store(where) for _ in range(count)]
    stores[0].migrate()
    return stores


def test_two_replicas_claiming_at_once_split_the_due_deliveries(
    new_database: Callable[[], Path | str],
) -> None:
    first, second = _replicas(new_database, 2)
    try:
        queued = _queued(first, 60)
        start = threading.Barrier(2)
        claimed: dict[int, list[int]] = {}

        def claim(replica: int, store: Store) -> None:
            now = datetime.now(UTC)
            start.wait()
            rows = outbox_rows.claim_due(
                store.connection(), TARGET, _iso(now), _iso(now + timedelta(seconds=60)), 100
            )
            claimed[replica] = [row[0] for row in rows]

        threads = [threading.Thread(target=claim, args=pair) for pair in enumerate((first, second))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not set(claimed[0]) & set(claimed[1]), "a delivery was claimed by both replicas"
        assert sorted(claimed[0] + claimed[1]) == queued
        # Claimed means not due again until the claim runs out (a replica that died mid-try).
        now = _iso(datetime.now(UTC))
        assert outbox_rows.claim_due(second.connection(), TARGET, now, now, 100) == []
    finally:
        for store in (first, second):
            store.close()


def test_a_claim_takes_the_oldest_due_deliveries_up_to_its_limit(
    new_database: Callable[[], Path | str],
) -> None:
    (store,) = _replicas(new_database, 1)
    try:
        queued = _queued(store, 6)
        now = datetime.now(UTC)
        later = _iso(now + timedelta(seconds=60))
        claims = [
            outbox_rows.claim_due(store.connection(), TARGET, _iso(now), later, 4) for _ in "ab"
        ]
        assert [[row[0] for row in rows] for rows in claims] == [queued[:4], queued[4:]]
    finally:
        store.close()


def test_a_stopping_retry_thread_hands_back_what_it_claimed_and_did_not_try(
    new_database: Callable[[], Path | str],
) -> None:
    """A server stopping mid-pass: the deliveries it claimed but never tried are due again at once, for its next
    run or another replica, not held until the claim runs out a minute later."""
    (store,) = _replicas(new_database, 1)
    queued = _queued(store, 3)
    tried: list[int] = []
    outbox: Outbox

    def deliver(entry: OutboxEntry) -> None:
        tried.append(entry.id)
        stopper = threading.Thread(target=outbox.stop)
        stopper.start()  # sets the stop at once, then waits for this try to end
        time.sleep(0.1)
        raise DeliveryFailed("HTTP 503")

    outbox = Outbox(store, TARGET, deliver, FAST, sweep_interval=0.05)
    outbox.start()
    try:
        deadline = time.monotonic() + 10
        while not tried and time.monotonic() < deadline:
            time.sleep(0.01)
        while outbox._thread is not None and time.monotonic() < deadline:  # noqa: SLF001 - stopped
            time.sleep(0.01)
        assert tried == queued[:1]
        now = _iso(datetime.now(UTC))
        due = outbox_rows.claim_due(store.connection(), TARGET, now, now, 10)
        # The one tried may be due again too (its backoff is short); the two never tried must be.
        assert set(queued[1:]) <= {row[0] for row in due}
    finally:
        outbox.stop()
        store.close()


def test_deliveries_retried_by_two_replicas_each_get_through_once(
    new_database: Callable[[], Path | str],
) -> None:
    """Both replicas' retry threads run over one outbox while the receiver refuses every delivery's first
    tries: each delivery is accepted exactly once, whichever replica's try it was."""
    stores = _replicas(new_database, 2)
    queued = _queued(stores[0], 20)
    accepted: Counter[int] = Counter()
    tries: Counter[int] = Counter()
    lock = threading.Lock()

    def receiver(entry: OutboxEntry) -> None:
        with lock:
            tries[entry.id] += 1
            if tries[entry.id] < 3:
                raise DeliveryFailed("HTTP 503")
            accepted[entry.id] += 1
        time.sleep(0.01)  # a try takes a moment, as over the network

    outboxes = [Outbox(store, TARGET, receiver, FAST) for store in stores]
    for outbox in outboxes:
        outbox.start()
    try:
        deadline = time.monotonic() + 30
        while outboxes[0].pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert outboxes[0].pending() == []
    finally:
        for outbox in outboxes:
            outbox.stop()
        for store in stores:
            store.close()
    assert sorted(accepted) == queued
    assert set(accepted.values()) == {1}, "a delivery got through more than once"


def test_a_delivery_gets_one_follow_up_however_many_replicas_store_it(
    new_database: Callable[[], Path | str],
) -> None:
    stores = _replicas(new_database, 2)
    try:
        (page,) = _queued(stores[0], 1)
        sent: list[int] = []
        outboxes = [Outbox(store, TARGET, lambda entry: sent.append(entry.id)) for store in stores]
        follow_ups = [
            outbox.send("resolve", "m", None, "withdrawal", {}, about_id=page)
            for outbox in outboxes
        ]
        assert follow_ups[0] is not None and follow_ups[0].delivered_at is not None
        assert follow_ups[1] is None, "the second replica stored a second withdrawal"
        assert sent == [follow_ups[0].id]
    finally:
        for store in stores:
            store.close()


def test_the_retry_thread_outlives_a_dropped_database_connection(postgres: Cluster) -> None:
    """PostgreSQL ends the outbox's connections (a restart, a failover): the retry thread says so in the log,
    reconnects, and still delivers what comes due after."""
    where = postgres.fresh_database()
    store, writer = Store(where), Store(where)
    store.migrate()
    sent: list[int] = []
    outbox = Outbox(store, TARGET, lambda entry: sent.append(entry.id), FAST, sweep_interval=0.05)
    outbox.start()
    try:
        time.sleep(0.2)  # the thread has its connection
        assert postgres.drop_connections(where) >= 1
        (queued,) = _queued(writer, 1)
        deadline = time.monotonic() + 20
        while queued not in sent and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sent == [queued]
    finally:
        outbox.stop()
        store.close()
        writer.close()
