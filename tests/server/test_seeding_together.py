"""Two processes seeding one new database (replicas started together): the one that writes second says it is
waiting, then finds the database seeded, on each store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fleetdesk.fleets import load_fleet
from fleetdesk.server.backend import Backend
from fleetdesk.server.clock import Clock
from fleetdesk.server.store import AlreadySeeded, Store, sqlite

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_a_seed_behind_another_says_it_waits_then_finds_the_database_seeded(
    new_database: Callable[[], Path | str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's other writes give up on a busy file after this long; the seed behind waits however long the
    # one ahead takes (here held past it), as PostgreSQL's lock waits.
    monkeypatch.setattr(sqlite, "BUSY_TIMEOUT_MS", 100)
    where = new_database()
    fleet = load_fleet("small", end_at=NOW)
    first, second = Store(where), Store(where)
    first.migrate()
    told = threading.Event()
    outcome: list[BaseException | int] = []

    def seed_second() -> None:
        try:
            outcome.append(second.seed(fleet, waiting=told.set))
        except BaseException as error:  # noqa: BLE001 - asserted below
            outcome.append(error)

    behind = threading.Thread(target=seed_second)

    def first_progress(done: int, _total: int, _buckets: int) -> None:
        if behind.ident is None:  # the first seed holds the write lock from here to its commit
            behind.start()
            assert told.wait(10), "the seed behind it never said it was waiting"
            time.sleep(0.5)

    try:
        counted = first.seed(fleet, first_progress)
        behind.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], AlreadySeeded), outcome
        assert second.connection().execute("SELECT count(*) FROM buckets").fetchone()[0] == counted
    finally:
        first.close()
        second.close()


def test_a_seed_nobody_else_writes_to_says_nothing_about_waiting(
    new_database: Callable[[], Path | str],
) -> None:
    store = Store(new_database())
    store.migrate()
    told = threading.Event()
    try:
        assert store.seed(load_fleet("small", end_at=NOW), waiting=told.set) > 0
    finally:
        store.close()
    assert not told.is_set()


def test_opening_a_new_database_says_what_it_seeds(new_database: Callable[[], Path | str]) -> None:
    said: list[str] = []
    progress: list[tuple[int, int]] = []
    backend = Backend.open(
        new_database(),
        "small",
        Clock(NOW),
        say=said.append,
        progress=lambda done, total, _buckets: progress.append((done, total)),
    )
    try:
        models = len(backend.registry)
        assert len(said) == 2
        assert said[0].startswith(
            f"{backend.store.where} is new: seeding it from small ({models:,} models,"
        )
        buckets = backend.store.connection().execute("SELECT count(*) FROM buckets").fetchone()[0]
        assert said[1].startswith(f"seeded it: {buckets:,} buckets in ") and said[1].endswith(" s")
        assert progress[-1] == (models, models)
    finally:
        backend.close()
