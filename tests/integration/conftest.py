"""Fixtures for real Prometheus/Alertmanager processes and real fleetdesk servers on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetdesk.server.embedded import EmbeddedServer, start_embedded

from .processes import Daemon, alertmanager


@pytest.fixture
def alertmanager_daemon(tmp_path: Path) -> Iterator[Daemon]:
    directory = tmp_path / "alertmanager"
    directory.mkdir()
    daemon = alertmanager(directory)
    daemon.start()
    yield daemon
    daemon.stop()


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    """The reference server on the small fleet, real clock, temp database."""
    server = start_embedded("small", tmp_path / "fleetdesk.sqlite")
    yield server
    server.stop()
