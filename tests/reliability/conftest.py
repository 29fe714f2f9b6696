"""Fixtures for the reliability tests (the per-test ``server``/``server_factory`` come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from fleetdesk.server.embedded import EmbeddedServer, start_embedded


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server for a module's read-only checks (seeding takes most of a second)."""
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    with start_embedded(
        "small", tmp_path_factory.mktemp("shared") / "fleetdesk.sqlite", now=now
    ) as server:
        yield server
