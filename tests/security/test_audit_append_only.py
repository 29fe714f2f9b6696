"""The audit log can only grow: no API route changes or removes a record, and the database refuses it too.

The store's own triggers are tested through Store.write in tests/server/test_store.py; here the real
server's API surface and a foreign SQLite connection (another process with the file) are checked.
"""

from __future__ import annotations

import sqlite3
import uuid

import httpx
import pytest

from fleetdesk.server.embedded import EmbeddedServer

MODEL = "ig_feed_late-stage_mtml.v41"


def test_no_route_updates_or_deletes_audit_records(server: EmbeddedServer) -> None:
    headers = {"Authorization": f"Bearer {server.admin_token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=10) as client:
        paths = client.get("/v1/openapi.json").json()["paths"]
        audit_paths = {path: set(methods) for path, methods in paths.items() if "audit" in path}
        assert audit_paths == {"/v1/audit": {"get"}}, audit_paths
        noted = client.post(f"/v1/models/{MODEL}/actions/note", json={"text": "evidence"},
                            headers={"Idempotency-Key": uuid.uuid4().hex})
        assert noted.status_code == 200, noted.text
        record = client.get("/v1/audit").json()["items"][0]
        for method in ("PUT", "PATCH", "DELETE"):
            for path in ("/v1/audit", f"/v1/audit/{record['id']}"):
                refused = client.request(method, path, json={"actor": "mallory"},
                                         headers={"Idempotency-Key": uuid.uuid4().hex})
                assert refused.status_code in (404, 405), (method, path, refused.status_code)
                assert refused.headers["content-type"].startswith("application/problem+json")
        assert client.get("/v1/audit").json()["items"] == [record]


@pytest.mark.parametrize("statement", ["UPDATE audit_log SET actor = 'mallory'", "DELETE FROM audit_log"])
def test_another_connection_cannot_rewrite_history(server: EmbeddedServer, statement: str) -> None:
    headers = {"Authorization": f"Bearer {server.admin_token}", "Idempotency-Key": uuid.uuid4().hex}
    assert httpx.post(f"{server.url}/v1/models/{MODEL}/actions/note", json={"text": "evidence"}, headers=headers,
                      timeout=10).status_code == 200
    foreign = sqlite3.connect(server.db_path, timeout=10)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            with foreign:
                foreign.execute(statement)
        assert foreign.execute("SELECT actor FROM audit_log").fetchall() == [("admin",)]
    finally:
        foreign.close()
