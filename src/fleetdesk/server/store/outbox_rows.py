"""The ``integration_outbox`` table: outbound deliveries, stored before their first try.

Every statement here stands alone (autocommit, on the calling thread's ``Store.connection()``), so the retry
thread never waits on, or holds, the store's write transactions. Rows come back whole (``RETURNING *``,
``SELECT *``) in the table's column order. Several replicas may retry one table: a delivery is claimed before
its try (``claim_due``), and a delivery has at most one follow-up (a unique index).
"""

from __future__ import annotations

from fleetdesk.server.store.contract import Connection, Row

OutboxRow = Row


def insert(
    conn: Connection,
    target: str,
    kind: str,
    about_id: int | None,
    incident_id: int | None,
    model_id: str,
    description: str,
    payload: str,
    created_at: str,
    next_attempt_at: str,
) -> OutboxRow | None:
    """A new delivery, not tried yet; returns its row, or None when ``about_id``'s delivery already has its
    follow-up (another replica stored it first)."""
    row: OutboxRow | None = conn.execute(
        "INSERT INTO integration_outbox (target, kind, about_id, incident_id, model_id, description,"
        " payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING RETURNING *",
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


def delivered(conn: Connection, entry_id: int, at: str) -> OutboxRow:
    """A try got through at ``at``; returns the row."""
    row: OutboxRow = conn.execute(
        "UPDATE integration_outbox SET attempts = attempts + 1, delivered_at = ?, last_error = NULL"
        " WHERE id = ? RETURNING *",
        (at, entry_id),
    ).fetchone()
    return row


def failed(conn: Connection, entry_id: int, retry_at: str, error: str) -> OutboxRow:
    """A try failed with ``error``; the next is due at ``retry_at``. Returns the row."""
    row: OutboxRow = conn.execute(
        "UPDATE integration_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?"
        " WHERE id = ? RETURNING *",
        (retry_at, error, entry_id),
    ).fetchone()
    return row


def undelivered(conn: Connection, target: str) -> list[OutboxRow]:
    """The target's deliveries not through yet, oldest first."""
    return conn.execute(
        "SELECT * FROM integration_outbox WHERE target = ? AND delivered_at IS NULL ORDER BY id",
        (target,),
    ).fetchall()


def claim_due(conn: Connection, target: str, now: str, until: str, limit: int) -> list[OutboxRow]:
    """Up to ``limit`` of the target's undelivered deliveries due at ``now``, oldest first, each claimed until
    ``until`` (its next try moved there) so that no other replica tries it meanwhile. One UPDATE, its
    conditions on the row itself: on PostgreSQL a second claimer waits for the first's row locks, then
    re-checks them against the claimed rows and skips them."""
    due = "target = ? AND delivered_at IS NULL AND next_attempt_at <= ?"
    rows = conn.execute(
        f"UPDATE integration_outbox SET next_attempt_at = ? WHERE {due} AND id IN"
        f" (SELECT id FROM integration_outbox WHERE {due} ORDER BY id LIMIT ?) RETURNING *",
        (until, target, now, target, now, limit),
    ).fetchall()
    return sorted(rows, key=lambda row: row[0])


def release(conn: Connection, entry_ids: list[int], due_at: str) -> None:
    """Hand back claimed deliveries not tried (their replica is stopping): due again at ``due_at``."""
    conn.executemany(
        "UPDATE integration_outbox SET next_attempt_at = ? WHERE id = ? AND delivered_at IS NULL",
        [(due_at, entry_id) for entry_id in entry_ids],
    )


def of_incident(conn: Connection, target: str, incident_id: int) -> list[OutboxRow]:
    """Every delivery the target made for one incident, oldest first."""
    return conn.execute(
        "SELECT * FROM integration_outbox WHERE target = ? AND incident_id = ? ORDER BY id",
        (target, incident_id),
    ).fetchall()


def next_attempt_at(conn: Connection, target: str) -> str | None:
    """When the target's next undelivered try is due, None when nothing waits."""
    (earliest,) = conn.execute(
        "SELECT MIN(next_attempt_at) FROM integration_outbox WHERE target = ? AND delivered_at IS NULL",
        (target,),
    ).fetchone()
    return None if earliest is None else str(earliest)


def unresolved_pages(conn: Connection, target: str, page_kind: str) -> list[OutboxRow]:
    """The target's deliveries of ``page_kind`` whose incident resolved and that nothing followed up yet:
    (id, incident_id, model_id, description, payload) each."""
    return conn.execute(
        "SELECT o.id, o.incident_id, o.model_id, o.description, o.payload FROM integration_outbox o"
        " JOIN incidents i ON i.id = o.incident_id"
        " WHERE o.target = ? AND o.kind = ? AND i.state = 'resolved' AND NOT EXISTS"
        " (SELECT 1 FROM integration_outbox r WHERE r.target = o.target AND r.about_id = o.id)",
        (target, page_kind),
    ).fetchall()
