"""The ``events`` table: the append-only log behind ``/v1/events`` (ids are the streams' SSE ids)."""

from __future__ import annotations

from collections.abc import Sequence

from fleetdesk.server.store.contract import Connection, Row
from fleetdesk.server.store.values import json_records


def append(conn: Connection, kind: str, at: str, model_id: str | None, payload: str) -> int:
    """Add one event in the current transaction; returns its id."""
    (event_id,) = conn.execute(
        "INSERT INTO events (type, at, model_id, payload) VALUES (?, ?, ?, ?) RETURNING id",
        (kind, at, model_id, payload),
    ).fetchone()
    return int(event_id)


def append_many(conn: Connection, events: Sequence[tuple[str, str, str | None, str]]) -> None:
    """Add events (type, at, model id, payload) in this order in the current transaction."""
    if conn.dialect.postgres and events:
        # One statement, the events bound as one JSON array: a first start at 50,000 models records 50,000
        # events, and one INSERT each was 9 s of it on PostgreSQL. Ids follow the array's order.
        conn.execute(
            "INSERT INTO events (type, at, model_id, payload) SELECT e.type, e.at, e.model_id, e.payload"
            " FROM json_array_elements(?::json) WITH ORDINALITY AS a (event, position),"
            " json_to_record(a.event) AS e (type text, at text, model_id text, payload text)"
            " ORDER BY a.position",
            (json_records(("type", "at", "model_id", "payload"), events),),
        )
        return
    conn.executemany("INSERT INTO events (type, at, model_id, payload) VALUES (?, ?, ?, ?)", events)


def rows_after(conn: Connection, after: int, limit: int) -> list[Row]:
    """Up to ``limit`` events with ids above ``after``, oldest first."""
    return conn.execute(
        "SELECT id, type, at, model_id, payload FROM events WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()


def last_id(conn: Connection) -> int:
    """The newest event's id, 0 for an empty log."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])
