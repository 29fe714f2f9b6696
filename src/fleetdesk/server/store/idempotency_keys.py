"""The ``idempotency`` table: one row per (caller, key) with the stored response of its request.

A key is ``in_progress`` from the commit of its change until its after-commit work is over, then ``done``.
"""

from __future__ import annotations

from fleetdesk.server.store.contract import Connection, Row


def find(conn: Connection, actor: str, key: str) -> Row | None:
    """The key's request_hash, state, status and body, None when unused."""
    row: Row | None = conn.execute(
        "SELECT request_hash, state, status, body FROM idempotency WHERE actor = ? AND key = ?",
        (actor, key),
    ).fetchone()
    return row


def claim(
    conn: Connection,
    actor: str,
    key: str,
    request_hash: str,
    state: str,
    status: int,
    body: str,
    created_at: str,
) -> None:
    """Store the key with its response, in the transaction of the change it answers."""
    conn.execute(
        "INSERT INTO idempotency (actor, key, request_hash, state, status, body, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (actor, key, request_hash, state, status, body, created_at),
    )


def finish(conn: Connection, actor: str, key: str) -> None:
    """The key's after-commit work is over: replays get the stored response."""
    conn.execute("UPDATE idempotency SET state = 'done' WHERE actor = ? AND key = ?", (actor, key))


def finish_interrupted(conn: Connection) -> None:
    """Every key still in progress is done: at start, a request whose change committed but whose
    after-commit work a crash cut short has its response stored, so replays return it."""
    conn.execute("UPDATE idempotency SET state = 'done' WHERE state = 'in_progress'")
