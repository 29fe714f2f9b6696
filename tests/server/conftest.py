"""The store and server suites run on each store (see tests/conftest.py)."""

from __future__ import annotations

import pytest

from postgres_cluster import STORE_KINDS


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)
