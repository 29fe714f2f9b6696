"""Another process holding the database's write lock: a clear 503 problem, reads go on, and it recovers."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable

import httpx
import pytest

from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.store import sqlite as store

MODEL = "ig_feed_late-stage_mtml.v41"


def test_locked_database_is_a_503_problem_then_the_same_intent_applies_once(
    server_factory: Callable[..., EmbeddedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short busy timeout keeps the test fast; the behaviour under test is what happens when it runs out.
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 300)
    server = server_factory()
    headers = {"Authorization": f"Bearer {server.admin_token}"}
    key = uuid.uuid4().hex
    note = {"text": "written while the database was locked"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=10) as client:
        holder = sqlite3.connect(server.db_path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            started = time.monotonic()
            refused = client.post(
                f"/v1/models/{MODEL}/actions/note", json=note, headers={"Idempotency-Key": key}
            )
            waited = time.monotonic() - started
            assert refused.status_code == 503, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            problem = refused.json()
            assert (
                problem["type"] == "urn:fleetdesk:problem:unavailable" and problem["status"] == 503
            )
            assert "busy" in problem["detail"] or "locked" in problem["detail"]
            assert "Traceback" not in refused.text and "sqlite" not in refused.text.lower()
            assert int(refused.headers["retry-after"]) >= 1
            assert waited < 5, f"the refusal took {waited:.1f}s"
            # WAL readers are not blocked by a writer: the console can still see the fleet.
            assert client.get("/v1/fleet/summary").status_code == 200
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        # Once the lock is gone the same intent (same key) applies, exactly once.
        applied = client.post(
            f"/v1/models/{MODEL}/actions/note", json=note, headers={"Idempotency-Key": key}
        )
        assert applied.status_code == 200, applied.text
        again = client.post(
            f"/v1/models/{MODEL}/actions/note", json=note, headers={"Idempotency-Key": key}
        )
        assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
        audit = client.get("/v1/audit", params={"model_id": MODEL}).json()
        assert [record["idempotency_key"] for record in audit["items"]] == [key]
