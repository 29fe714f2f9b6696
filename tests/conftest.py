"""Shared fixtures: the real fleetdesk server, in-process on a random loopback port with a temp database.

``server`` yields a fleetdesk.server.embedded.EmbeddedServer:
- ``.url``: e.g. http://127.0.0.1:41234 (the API is under ``.url + "/v1"``)
- ``.tokens``: "admin", "viewer", "oncall" (every team) and "oncall:<team>" (that team only)
- ``.db_path``: the temp SQLite file; ``.backend``: the running backend (read-only use in tests)
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

FIXED_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""The frozen server time of the ``server`` fixture (a bucket boundary)."""


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., EmbeddedServer]]:
    """Start more servers (other fleet, db file, paging target, now); each is stopped after the test."""
    started: list[EmbeddedServer] = []

    def start(
        fleet: str = "small",
        db_path: Path | None = None,
        now: datetime | None = FIXED_NOW,
        **options: Any,
    ) -> EmbeddedServer:
        embedded = start_embedded(
            fleet, db_path or tmp_path / f"fleetdesk-{len(started)}.sqlite", now=now, **options
        )
        started.append(embedded)
        return embedded

    yield start
    for embedded in reversed(started):
        embedded.stop()


@pytest.fixture
def server(server_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    """The real server on the small fleet, frozen at FIXED_NOW."""
    return server_factory()
