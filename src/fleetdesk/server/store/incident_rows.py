"""The incident tables: ``incidents``, their timelines (``incident_events``), the notes and pages made on
them (``notes``, ``pages``) and where each one's trouble began (``incident_origins``)."""

from __future__ import annotations

from collections.abc import Sequence

from fleetdesk.server.store import listing
from fleetdesk.server.store.contract import Connection, Row

# --- incidents -------------------------------------------------------------


def get(conn: Connection, incident_id: int) -> Row | None:
    """The incident's whole row, None when there is none."""
    row: Row | None = conn.execute(
        "SELECT * FROM incidents WHERE id = ?", (incident_id,)
    ).fetchone()
    return row


def page(
    conn: Connection, *, state: str | None, model_id: str | None, offset: int, limit: int
) -> tuple[int, list[Row]]:
    """(incidents in this state and holding this model, when given; the page of their rows, newest first)."""
    where: list[str] = []
    params: list[object] = []
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if model_id is not None:
        where.append(conn.dialect.json_array_contains("incidents.model_ids"))
        params.append(model_id)
    return listing.page(conn, "incidents", "*", where, params, "id DESC", offset, limit)


def open_count(conn: Connection) -> int:
    """How many incidents are not resolved."""
    return int(
        conn.execute("SELECT count(*) FROM incidents WHERE state != 'resolved'").fetchone()[0]
    )


def insert(
    conn: Connection, model_id: str, model_ids: str, severity: str, title: str, at: str
) -> int:
    """A new open incident on ``model_id`` (``model_ids``: its models, JSON); returns its id."""
    (incident_id,) = conn.execute(
        "INSERT INTO incidents (model_id, model_ids, state, severity, title, opened_at, updated_at)"
        " VALUES (?, ?, 'open', ?, ?, ?, ?) RETURNING id",
        (model_id, model_ids, severity, title, at, at),
    ).fetchone()
    return int(incident_id)


def set_members(conn: Connection, incident_id: int, model_ids: str, severity: str) -> None:
    """The incident's models (JSON) and severity."""
    conn.execute(
        "UPDATE incidents SET model_ids = ?, severity = ? WHERE id = ?",
        (model_ids, severity, incident_id),
    )


def set_severity(conn: Connection, incident_id: int, severity: str) -> None:
    conn.execute("UPDATE incidents SET severity = ? WHERE id = ?", (severity, incident_id))


def set_title(conn: Connection, incident_id: int, title: str) -> None:
    conn.execute("UPDATE incidents SET title = ? WHERE id = ?", (title, incident_id))


def acknowledge(conn: Connection, incident_id: int, actor: str, at: str) -> None:
    conn.execute(
        "UPDATE incidents SET state = 'acknowledged', acknowledged_at = ?, acknowledged_by = ? WHERE id = ?",
        (at, actor, incident_id),
    )


def resolve(conn: Connection, incident_id: int, at: str) -> None:
    conn.execute(
        "UPDATE incidents SET state = 'resolved', resolved_at = ? WHERE id = ?",
        (at, incident_id),
    )


# --- timelines, notes and pages ----------------------------------------------


def add_event(
    conn: Connection,
    incident_id: int,
    at: str,
    kind: str,
    model_id: str,
    actor: str | None,
    text: str,
    audit_id: int | None,
) -> int:
    """Append to the incident's timeline and bump its updated time; returns the entry's id."""
    (entry_id,) = conn.execute(
        "INSERT INTO incident_events (incident_id, at, kind, model_id, actor, text, audit_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (incident_id, at, kind, model_id, actor, text, audit_id),
    ).fetchone()
    conn.execute("UPDATE incidents SET updated_at = ? WHERE id = ?", (at, incident_id))
    return int(entry_id)


def events(conn: Connection, incident_id: int) -> list[Row]:
    """The incident's whole timeline, oldest first."""
    return conn.execute(
        "SELECT * FROM incident_events WHERE incident_id = ? ORDER BY id", (incident_id,)
    ).fetchall()


def joined_at(conn: Connection, incident_id: int) -> dict[str, str]:
    """By model id, when each of the incident's models first opened or joined it."""
    return {
        row["model_id"]: row["at"]
        for row in conn.execute(
            "SELECT model_id, min(at) AS at FROM incident_events WHERE incident_id = ? AND kind IN ('opened', 'joined')"
            " GROUP BY model_id",
            (incident_id,),
        )
    }


def add_note(
    conn: Connection,
    model_id: str,
    incident_id: int | None,
    author: str,
    at: str,
    text: str | None,
) -> None:
    conn.execute(
        "INSERT INTO notes (model_id, incident_id, author, at, text) VALUES (?, ?, ?, ?, ?)",
        (model_id, incident_id, author, at, text),
    )


def notes(conn: Connection, incident_id: int) -> list[Row]:
    """The notes made on the incident, oldest first."""
    return conn.execute(
        "SELECT * FROM notes WHERE incident_id = ? ORDER BY id", (incident_id,)
    ).fetchall()


def add_page(
    conn: Connection,
    at: str,
    model_id: str,
    team: str,
    rotation: str,
    target: str,
    reason: str,
    incident_id: int | None,
    actor: str,
    delivered_via: str | None,
) -> None:
    conn.execute(
        "INSERT INTO pages (at, model_id, team, rotation, target, reason, incident_id, actor, delivered_via)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (at, model_id, team, rotation, target, reason, incident_id, actor, delivered_via),
    )


def pages(conn: Connection, incident_id: int) -> list[Row]:
    """(at, actor, team, model_id) of the pages sent on the incident, oldest first."""
    return conn.execute(
        "SELECT at, actor, team, model_id FROM pages WHERE incident_id = ? ORDER BY id",
        (incident_id,),
    ).fetchall()


# --- origins (shared-cause groups) ------------------------------------------


def add_origin(
    conn: Connection,
    incident_id: int,
    app: str,
    surface: str,
    label: str,
    began_at: str | None,
) -> None:
    """Where a new incident's trouble began: its opening model's surface and first bad bucket."""
    conn.execute(
        "INSERT INTO incident_origins (incident_id, app, surface, label, began_at) VALUES (?, ?, ?, ?, ?)",
        (incident_id, app, surface, label, began_at),
    )


def sharing_candidate(
    conn: Connection, app: str, surface: str, began_from: str, began_to: str
) -> int | None:
    """The first unresolved incident opened on this app and surface, its trouble begun in [began_from,
    began_to], that is already a shared group or holds one model, and that no foundation model opened."""
    row = conn.execute(
        "SELECT o.incident_id FROM incident_origins o JOIN incidents i ON i.id = o.incident_id"
        " WHERE o.app = ? AND o.surface = ? AND o.began_at BETWEEN ? AND ? AND i.state != 'resolved'"
        f" AND (o.shared = 1 OR {conn.dialect.json_array_length('i.model_ids')} = 1)"
        " AND (SELECT role FROM models WHERE id = i.model_id) != 'foundation'"
        " ORDER BY o.incident_id LIMIT 1",
        (app, surface, began_from, began_to),
    ).fetchone()
    return None if row is None else int(row["incident_id"])


def mark_shared(conn: Connection, incident_id: int) -> str:
    """Mark the incident a shared-cause group; returns its surface label."""
    conn.execute("UPDATE incident_origins SET shared = 1 WHERE incident_id = ?", (incident_id,))
    return str(
        conn.execute(
            "SELECT label FROM incident_origins WHERE incident_id = ?", (incident_id,)
        ).fetchone()["label"]
    )


def shared_origins(conn: Connection, incident_ids: Sequence[int]) -> list[Row]:
    """(incident_id, app, surface, label, began_at, opened_at) of the shared groups among these incidents."""
    return [
        row
        for ids, values in conn.dialect.one_of("o.incident_id", incident_ids)
        for row in conn.execute(
            "SELECT o.incident_id, o.app, o.surface, o.label, o.began_at, i.opened_at FROM incident_origins o"
            f" JOIN incidents i ON i.id = o.incident_id WHERE o.shared = 1 AND {ids}",
            values,
        ).fetchall()
    ]
