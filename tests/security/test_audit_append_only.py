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
        noted = client.post(
            f"/v1/models/{MODEL}/actions/note",
            json={"text": "evidence"},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert noted.status_code == 200, noted.text
        record = client.get("/v1/audit").json()["items"][0]
        for method in ("PUT", "PATCH", "DELETE"):
            for path in ("/v1/audit", f"/v1/audit/{record['id']}"):
                refused = client.request(
                    method,
                    path,
                    json={"actor": "mallory"},
                    headers={"Idempotency-Key": uuid.uuid4().hex},
                )
                assert refused.status_code in (404, 405), (method, path, refused.status_code)
                assert refused.headers["content-type"].startswith("application/problem+json")
        assert client.get("/v1/audit").json()["items"] == [record]


# A forged copy of record 1: every column, with the actor and reason changed.
_FORGED = (
    "(id, at, actor, role, action, model_id, reason, before, after, idempotency_key, incident_id, detail)"
    " SELECT id, at, 'mallory', role, action, model_id, 'nothing happened', before, after, idempotency_key,"
    " incident_id, detail FROM audit_log WHERE id = 1"
)
_COLUMNS = "(id, at, actor, role, action, model_id, reason, idempotency_key, detail)"
_FORGED_VALUES = (
    "VALUES (1, '2026-01-01', 'mallory', 'admin', 'note', 'x', 'nothing happened', 'k', '{}')"
)

# Every SQL path that rewrites or removes an existing row: plain UPDATE/DELETE, their OR-conflict forms, REPLACE
# (which deletes the colliding row without firing DELETE triggers), and upserts (which turn an insert into an update).
REWRITES = [
    "UPDATE audit_log SET actor = 'mallory'",
    "UPDATE OR REPLACE audit_log SET actor = 'mallory' WHERE id = 1",
    "UPDATE OR IGNORE audit_log SET reason = '' WHERE id = 1",
    "DELETE FROM audit_log",
    "DELETE FROM audit_log WHERE id = 1",
    f"INSERT OR REPLACE INTO audit_log {_FORGED}",
    f"REPLACE INTO audit_log {_FORGED}",
    f"INSERT OR REPLACE INTO audit_log {_COLUMNS} {_FORGED_VALUES}",
    f"REPLACE INTO audit_log {_COLUMNS} {_FORGED_VALUES}",
    f"INSERT INTO audit_log {_COLUMNS} {_FORGED_VALUES} ON CONFLICT (id) DO UPDATE SET actor = excluded.actor",
    f"INSERT INTO audit_log {_FORGED} ON CONFLICT DO UPDATE SET reason = excluded.reason",
]


@pytest.mark.parametrize("recursive_triggers", [False, True])
@pytest.mark.parametrize("statement", REWRITES)
def test_another_connection_cannot_rewrite_history(
    server: EmbeddedServer, statement: str, recursive_triggers: bool
) -> None:
    headers = {"Authorization": f"Bearer {server.admin_token}", "Idempotency-Key": uuid.uuid4().hex}
    assert (
        httpx.post(
            f"{server.url}/v1/models/{MODEL}/actions/note",
            json={"text": "evidence"},
            headers=headers,
            timeout=10,
        ).status_code
        == 200
    )
    foreign = sqlite3.connect(server.db_path, timeout=10)
    try:
        foreign.execute(f"PRAGMA recursive_triggers = {int(recursive_triggers)}")
        before = foreign.execute("SELECT * FROM audit_log").fetchall()
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            with foreign:
                foreign.execute(statement)
        assert foreign.execute("SELECT * FROM audit_log").fetchall() == before
        assert before[0][2] == "admin"
    finally:
        foreign.close()


def test_another_connection_may_still_append(server: EmbeddedServer) -> None:
    """The triggers refuse rewrites only: a new record (fresh id, or none) is still an append."""
    foreign = sqlite3.connect(server.db_path, timeout=10)
    try:
        with foreign:
            foreign.execute(
                f"INSERT INTO audit_log {_COLUMNS} VALUES (NULL, '2026-01-01', 'ops', 'admin', 'note',"
                " 'x', 'manual entry', 'k1', '{}')"
            )
            foreign.execute(
                f"INSERT OR REPLACE INTO audit_log {_COLUMNS} VALUES (99, '2026-01-01', 'ops', 'admin',"
                " 'note', 'x', 'manual entry', 'k2', '{}')"
            )
        assert foreign.execute("SELECT count(*) FROM audit_log").fetchone()[0] == 2
    finally:
        foreign.close()


def test_blob_io_cannot_rewrite_a_record_in_place(server: EmbeddedServer) -> None:
    """Incremental blob I/O writes into a stored value without an UPDATE, so no trigger sees it: every column of
    a record (a rollback's, so before and after are set) must refuse to be opened for writing."""
    headers = {"Authorization": f"Bearer {server.admin_token}", "Idempotency-Key": uuid.uuid4().hex}
    experiment = "ig_feed_late-stage_mtml.x1-watch-time"
    detail = httpx.get(f"{server.url}/v1/models/{experiment}", headers=headers, timeout=10).json()
    rolled = httpx.post(
        f"{server.url}/v1/models/{experiment}/actions/rollback",
        json={
            "reason": "evidence",
            "expected_serving_model_id": detail["live"]["serving_model_id"],
            "acknowledged_target": detail["model"]["baseline_model_id"],
        },
        headers=headers,
        timeout=10,
    )
    assert rolled.status_code == 200, rolled.text
    foreign = sqlite3.connect(server.db_path, timeout=10)
    try:
        before = foreign.execute("SELECT * FROM audit_log").fetchall()
        columns = [row[1] for row in foreign.execute("PRAGMA table_info(audit_log)")]
        (record_id,) = foreign.execute("SELECT id FROM audit_log").fetchone()
        rewritten = []
        for column in columns:
            try:
                with foreign.blobopen("audit_log", column, record_id) as blob:
                    blob.write(b"X" * len(blob))
                foreign.commit()
                rewritten.append(column)
            except sqlite3.OperationalError:
                pass  # "cannot open indexed column for writing" (or not a text value at all)
        assert not rewritten, rewritten
        assert foreign.execute("SELECT * FROM audit_log").fetchall() == before
        assert before[0][columns.index("before")] and before[0][columns.index("after")]
    finally:
        foreign.close()


@pytest.mark.parametrize("table", ["registry_versions", "model_versions", "type_versions"])
def test_blob_io_cannot_rewrite_the_registry_history_in_place(
    server: EmbeddedServer, table: str
) -> None:
    """The registry's history is evidence as the audit log is: no column of its tables opens for writing."""
    foreign = sqlite3.connect(server.db_path, timeout=10)
    try:
        if table == "type_versions":  # the small fleet's registry has no type records: append one
            foreign.execute(
                "INSERT INTO type_versions VALUES ('sealed-check', 0, '{\"bands\": {}}')"
            )
            foreign.commit()
        before = foreign.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        assert before, f"{table} is empty: nothing to try"
        columns = [row[1] for row in foreign.execute(f"PRAGMA table_info({table})")]
        (rowid,) = foreign.execute(f"SELECT min(rowid) FROM {table}").fetchone()
        rewritten = []
        for column in columns:
            try:
                with foreign.blobopen(table, column, rowid) as blob:
                    blob.write(b"X" * len(blob))
                foreign.commit()
                rewritten.append(column)
            except sqlite3.OperationalError:
                pass  # "cannot open indexed column for writing" (or not a text value at all)
        assert not rewritten, rewritten
        assert foreign.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() == before
    finally:
        foreign.close()
