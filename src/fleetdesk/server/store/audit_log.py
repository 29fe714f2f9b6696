"""The ``audit_log`` table: one append-only record per change (the database refuses rewrites)."""

from __future__ import annotations

from fleetdesk.server.store import listing
from fleetdesk.server.store.contract import Connection, Row


def append(
    conn: Connection,
    at: str,
    actor: str,
    role: str,
    action: str,
    model_id: str,
    reason: str,
    before: str | None,
    after: str | None,
    idempotency_key: str,
    incident_id: int | None,
    detail: str,
) -> int:
    """Add one record in the current transaction (``before``/``after``: live states as JSON, for actions;
    ``detail``: JSON); returns its id."""
    (audit_id,) = conn.execute(
        "INSERT INTO audit_log (at, actor, role, action, model_id, reason, before, after, idempotency_key,"
        " incident_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            at,
            actor,
            role,
            action,
            model_id,
            reason,
            before,
            after,
            idempotency_key,
            incident_id,
            detail,
        ),
    ).fetchone()
    return int(audit_id)


def page(
    conn: Connection,
    *,
    model_id: str | None,
    actor: str | None,
    action: str | None,
    since: str | None,
    until: str | None,
    offset: int,
    limit: int,
) -> tuple[int, list[Row]]:
    """(records matching every filter given, the page of them newest first); ``since`` is inclusive,
    ``until`` exclusive."""
    where: list[str] = []
    params: list[object] = []
    for column, value in (("model_id", model_id), ("actor", actor), ("action", action)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    if until is not None:
        where.append("at < ?")
        params.append(until)
    return listing.page(conn, "audit_log", "*", where, params, "id DESC", offset, limit)
