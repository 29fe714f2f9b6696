"""The ``integration_outbox`` table: outbound deliveries, stored before their first try.

The outbox lives in the server's SQLite file but on connections of its own (autocommit, opened per use),
so its retry thread never waits on, or holds, the store's write transactions. Rows come back whole
(``RETURNING *``, ``SELECT *``) as tuples in the table's column order.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS integration_outbox (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    about_id INTEGER,
    incident_id INTEGER,
    model_id TEXT NOT NULL,
    description TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS integration_outbox_due
    ON integration_outbox (target, next_attempt_at) WHERE delivered_at IS NULL;
"""

OutboxRow = tuple[Any, ...]


@contextlib.contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the outbox's database (autocommit), closed when the block ends."""
    with contextlib.closing(sqlite3.connect(path, timeout=10.0, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        yield db


def create(path: Path) -> None:
    """The table and its index, unless there."""
    with connect(path) as db:
        db.executescript(_SCHEMA)


def insert(
    db: sqlite3.Connection,
    target: str,
    kind: str,
    about_id: int | None,
    incident_id: int | None,
    model_id: str,
    description: str,
    payload: str,
    created_at: str,
    next_attempt_at: str,
) -> OutboxRow:
    """A new delivery, not tried yet; returns its row."""
    row: OutboxRow = db.execute(
        "INSERT INTO integration_outbox (target, kind, about_id, incident_id, model_id, description,"
        " payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
        (
            target,
            kind,
            about_id,
            incident_id,
            model_id,
            description,
            payload,
            created_at,
            next_attempt_at,
        ),
    ).fetchone()
    return row


def delivered(db: sqlite3.Connection, entry_id: int, at: str) -> OutboxRow:
    """A try got through at ``at``; returns the row."""
    row: OutboxRow = db.execute(
        "UPDATE integration_outbox SET attempts = attempts + 1, delivered_at = ?, last_error = NULL"
        " WHERE id = ? RETURNING *",
        (at, entry_id),
    ).fetchone()
    return row


def failed(db: sqlite3.Connection, entry_id: int, retry_at: str, error: str) -> OutboxRow:
    """A try failed with ``error``; the next is due at ``retry_at``. Returns the row."""
    row: OutboxRow = db.execute(
        "UPDATE integration_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?"
        " WHERE id = ? RETURNING *",
        (retry_at, error, entry_id),
    ).fetchone()
    return row


def undelivered(db: sqlite3.Connection, target: str) -> list[OutboxRow]:
    """The target's deliveries not through yet, oldest first."""
    return db.execute(
        "SELECT * FROM integration_outbox WHERE target = ? AND delivered_at IS NULL ORDER BY id",
        (target,),
    ).fetchall()


def due(db: sqlite3.Connection, target: str, now: str) -> list[OutboxRow]:
    """The target's undelivered deliveries whose next try is due at ``now``, oldest first."""
    return db.execute(
        "SELECT * FROM integration_outbox WHERE target = ? AND delivered_at IS NULL"
        " AND next_attempt_at <= ? ORDER BY id",
        (target, now),
    ).fetchall()


def of_incident(db: sqlite3.Connection, target: str, incident_id: int) -> list[OutboxRow]:
    """Every delivery the target made for one incident, oldest first."""
    return db.execute(
        "SELECT * FROM integration_outbox WHERE target = ? AND incident_id = ? ORDER BY id",
        (target, incident_id),
    ).fetchall()


def next_attempt_at(db: sqlite3.Connection, target: str) -> str | None:
    """When the target's next undelivered try is due, None when nothing waits."""
    (earliest,) = db.execute(
        "SELECT MIN(next_attempt_at) FROM integration_outbox WHERE target = ? AND delivered_at IS NULL",
        (target,),
    ).fetchone()
    return None if earliest is None else str(earliest)


def unresolved_pages(db: sqlite3.Connection, target: str, page_kind: str) -> list[OutboxRow]:
    """The target's deliveries of ``page_kind`` whose incident resolved and that nothing followed up yet:
    (id, incident_id, model_id, description, payload) each."""
    return db.execute(
        "SELECT o.id, o.incident_id, o.model_id, o.description, o.payload FROM integration_outbox o"
        " JOIN incidents i ON i.id = o.incident_id"
        " WHERE o.target = ? AND o.kind = ? AND i.state = 'resolved' AND NOT EXISTS"
        " (SELECT 1 FROM integration_outbox r WHERE r.target = o.target AND r.about_id = o.id)",
        (target, page_kind),
    ).fetchall()
