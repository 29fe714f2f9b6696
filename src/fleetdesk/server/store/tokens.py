"""The ``tokens`` table: API bearer tokens, kept only as hashes of the token text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from fleetdesk.server.store.contract import Connection, Row


def insert(conn: Connection, rows: Iterable[Sequence[Any]]) -> None:
    """New tokens, each (hash, user, role, teams JSON, created_at, expires_at or None)."""
    conn.executemany(
        'INSERT INTO tokens (hash, "user", role, teams, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
        rows,
    )


def revoke_hash(conn: Connection, token_hash: str) -> int:
    """Revoke the token with this hash (when live); returns how many were revoked."""
    return conn.execute(
        "UPDATE tokens SET revoked = 1 WHERE hash = ? AND revoked = 0", (token_hash,)
    ).rowcount


def revoke_user(conn: Connection, user: str | None) -> int:
    """Revoke every live token of ``user``; returns how many were revoked."""
    return conn.execute(
        'UPDATE tokens SET revoked = 1 WHERE "user" = ? AND revoked = 0', (user,)
    ).rowcount


def by_hash(conn: Connection, token_hash: str) -> Row | None:
    """The token with this hash: id, user, role, teams, expires_at, revoked."""
    row: Row | None = conn.execute(
        'SELECT id, "user", role, teams, expires_at, revoked FROM tokens WHERE hash = ?',
        (token_hash,),
    ).fetchone()
    return row


def validity(conn: Connection, token_id: int) -> Row | None:
    """Whether the token with this id still holds: its expires_at and revoked, None once removed."""
    row: Row | None = conn.execute(
        "SELECT expires_at, revoked FROM tokens WHERE id = ?", (token_id,)
    ).fetchone()
    return row


def every(conn: Connection) -> list[Row]:
    """Every token (never its hash), oldest first."""
    return conn.execute(
        'SELECT id, "user", role, teams, created_at, expires_at, revoked FROM tokens ORDER BY id'
    ).fetchall()
