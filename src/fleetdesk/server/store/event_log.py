"""The ``events`` table: the append-only log behind ``/v1/events`` (ids are the streams' SSE ids)."""

from __future__ import annotations

from fleetdesk.server.store.contract import Connection, Row


def append(conn: Connection, kind: str, at: str, model_id: str | None, payload: str) -> int:
    """Add one event in the current transaction; returns its id."""
    (event_id,) = conn.execute(
        "INSERT INTO events (type, at, model_id, payload) VALUES (?, ?, ?, ?) RETURNING id",
        (kind, at, model_id, payload),
    ).fetchone()
    return int(event_id)


def rows_after(conn: Connection, after: int, limit: int) -> list[Row]:
    """Up to ``limit`` events with ids above ``after``, oldest first."""
    return conn.execute(
        "SELECT id, type, at, model_id, payload FROM events WHERE id > ? ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()


def last_id(conn: Connection) -> int:
    """The newest event's id, 0 for an empty log."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])
