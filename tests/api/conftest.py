"""Clients of the real server, one per role, and the small fleet's models the API tests act on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from fleetdesk.client import ClientTimeouts, FleetdeskClient, RetryPolicy
from fleetdesk.server.embedded import EmbeddedServer, start_embedded
from postgres_cluster import STORE_KINDS

# Models of the small fleet (fixtures/fleets/small.json) with the shape each test needs.
EXPERIMENT = "ig_feed_late-stage_mtml.x1-watch-time"  # scale-up experiment, paging, open incident
EXPERIMENT_TEAM = "ig-feed-ranking"
EXPERIMENT_BASELINE = "ig_feed_late-stage_mtml.v41"
QUIET_EXPERIMENT = (
    "ig_reels_late-stage_dhen.x4-int8"  # healthy experiment, finalization, no incident
)
NO_BASELINE = "ig_tagging_late-stage_dlrm.v6"  # baseline: nothing to roll back to, no incident
FOUNDATION = "fb_cross-surface_late-stage_transformer.fm-v4"  # paging foundation model
DOWNSTREAM = "fb_feed_late-stage_dhen.v52"  # takes knowledge from FOUNDATION, joined its incident
OTHER_TEAM = "fb-feed-ranking"

TEST_TIMEOUTS = ClientTimeouts(connect=2, read=10, write=10, pool=5, deadline=20)
TEST_RETRY = RetryPolicy(attempts=3, base_delay=0.02, max_delay=0.2)

Connect = Callable[..., Awaitable[FleetdeskClient]]

SERVER_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""The frozen time of the shared ``server`` fixture (tests/conftest.py FIXED_NOW)."""


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Every API test that starts a server runs on each store."""
    return str(request.param)


@pytest.fixture(scope="module", params=STORE_KINDS)
def shared_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EmbeddedServer]:
    """One server for a module of read-only tests (seeding takes most of a second per server), per store."""
    if request.param == "postgresql":
        where: Path | str = request.getfixturevalue("postgres").fresh_database()
    else:
        where = tmp_path_factory.mktemp("shared") / "fleetdesk.sqlite"
    with start_embedded("small", where, now=SERVER_NOW) as server:
        yield server


@pytest.fixture
async def connect(server: EmbeddedServer) -> AsyncIterator[Connect]:
    """``await connect("oncall:ig-feed-ranking")``: a client of the real server with that fixture token."""
    opened: list[FleetdeskClient] = []

    async def make(
        who: str | None = "admin",
        *,
        token: str | None = None,
        url: str | None = None,
        **options: Any,
    ) -> FleetdeskClient:
        secret = token if token is not None else (server.tokens[who] if who is not None else None)
        options.setdefault("timeouts", TEST_TIMEOUTS)
        options.setdefault("retry", TEST_RETRY)
        client = FleetdeskClient(
            url or server.url, SecretStr(secret) if secret is not None else None, **options
        )
        await client.__aenter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        await client.__aexit__(None, None, None)


@pytest.fixture
async def admin(connect: Connect) -> FleetdeskClient:
    return await connect("admin")
