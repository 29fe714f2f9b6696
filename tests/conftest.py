"""Shared fixtures: the real fleetdesk server, in-process on a random loopback port with a temp database.

``server`` yields a fleetdesk.server.embedded.EmbeddedServer:
- ``.url``: e.g. http://127.0.0.1:41234 (the API is under ``.url + "/v1"``)
- ``.tokens``: "admin", "viewer", "oncall" (every team) and "oncall:<team>" (that team only)
- ``.db_path``: the temp SQLite file or PostgreSQL URL; ``.backend``: the running backend (read-only use)
The store suites (tests/server, tests/api) run each such test on both stores: SQLite and a database in
a throwaway PostgreSQL cluster (tests/postgres_cluster.py) started once per session.
Its clock is frozen at FIXED_NOW (move it with ``PUT /v1/clock`` as admin); the
database is seeded from the small fleet with history ending there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from postgres_cluster import Cluster, running_cluster

FIXED_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""The frozen server time of the ``server`` fixture (a bucket boundary)."""


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster for the session."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def store_kind() -> str:
    """The store under test; tests/server and tests/api override it to run on each of
    postgres_cluster.STORE_KINDS."""
    return "sqlite"


@pytest.fixture
def new_database(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> Callable[[], Path | str]:
    """``new_database()``: a fresh database of the kind under test (a temp file, or a PostgreSQL URL)."""
    numbers = iter(range(1_000))

    def make() -> Path | str:
        if store_kind == "postgresql":
            cluster: Cluster = request.getfixturevalue("postgres")
            return cluster.fresh_database()
        return tmp_path / f"fleetdesk-{next(numbers)}.sqlite"

    return make


@pytest.fixture
def server_factory(
    new_database: Callable[[], Path | str],
) -> Iterator[Callable[..., EmbeddedServer]]:
    """Start more servers (other fleet, db, paging target, now); each is stopped after the test."""
    started: list[EmbeddedServer] = []

    def start(
        fleet: str = "small",
        db_path: Path | str | None = None,
        now: datetime | None = FIXED_NOW,
        **options: Any,
    ) -> EmbeddedServer:
        embedded = start_embedded(fleet, db_path or new_database(), now=now, **options)
        started.append(embedded)
        return embedded

    yield start
    for embedded in reversed(started):
        embedded.stop()


@pytest.fixture
def server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    """The real server on the small fleet, frozen at FIXED_NOW."""
    return server_factory()
