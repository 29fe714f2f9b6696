"""Incidents: opened or joined when a model turns unstable or pages, resolved when all is clear.

An incident belongs to the model it opened on; a model whose upstream model
already has an incident joins that one instead of opening its own, so a
degraded foundation model gives one incident with its blast radius, not forty.
A model of the same app and surface as an open incident's model, whose trouble
began in the same or the next bucket, joins that incident too: shared cause
suspected (see incident_groups). ``models.open_incident_id`` points at a
model's open or acknowledged incident.

The timeline keeps every entry; the incident detail collapses a server entry
repeated with nothing a person did in between into one entry with a count and
the last time, so the actions and notes are not buried under "page alert fires"
every hour.
"""

from __future__ import annotations

import json
from datetime import datetime

from fleetdesk.domain.registry import Registry
from fleetdesk.domain.slo import Severity
from fleetdesk.server import incident_groups
from fleetdesk.server.events import append_event
from fleetdesk.server.store import (
    Connection,
    Row,
    dumps,
    incident_rows,
    iso,
    model_rows,
    parse_iso,
)
from fleetdesk.wire import (
    EventType,
    Incident,
    IncidentCause,
    IncidentDetail,
    IncidentEventData,
    IncidentGroup,
    IncidentPage,
    IncidentState,
    Note,
    TimelineEntry,
)

_SEVERITY_RANK = {Severity.PAGE: 0, Severity.TICKET: 1}
PERSON_KINDS = frozenset({"action", "ack", "note"})
"""Timeline entries a person made: they stand out, and they end a run of repeated server entries."""


def _optional_time(text: str | None) -> datetime | None:
    return None if text is None else parse_iso(text)


def incident_from_row(row: Row, group: IncidentGroup | None = None) -> Incident:
    model_ids = json.loads(row["model_ids"])
    cause = (
        IncidentCause.SHARED
        if group
        else IncidentCause.UPSTREAM
        if len(model_ids) > 1
        else IncidentCause.OWN
    )
    return Incident(
        id=row["id"],
        model_id=row["model_id"],
        model_ids=model_ids,
        state=IncidentState(row["state"]),
        severity=Severity(row["severity"]),
        title=row["title"],
        opened_at=parse_iso(row["opened_at"]),
        updated_at=parse_iso(row["updated_at"]),
        acknowledged_at=_optional_time(row["acknowledged_at"]),
        acknowledged_by=row["acknowledged_by"],
        resolved_at=_optional_time(row["resolved_at"]),
        cause=cause,
        group=group,
    )


def get_incident(conn: Connection, incident_id: int) -> Incident | None:
    row = incident_rows.get(conn, incident_id)
    return (
        None
        if row is None
        else incident_from_row(row, incident_groups.groups(conn, [incident_id]).get(incident_id))
    )


def _entry_from_row(row: Row) -> TimelineEntry:
    return TimelineEntry(
        id=row["id"],
        incident_id=row["incident_id"],
        at=parse_iso(row["at"]),
        kind=row["kind"],
        model_id=row["model_id"],
        actor=row["actor"],
        text=row["text"],
        audit_id=row["audit_id"],
    )


def note_from_row(row: Row) -> Note:
    return Note(
        id=row["id"],
        model_id=row["model_id"],
        incident_id=row["incident_id"],
        author=row["author"],
        at=parse_iso(row["at"]),
        text=row["text"],
    )


def incident_detail(
    conn: Connection, registry: Registry, incident_id: int
) -> IncidentDetail | None:
    incident = get_incident(conn, incident_id)
    if incident is None:
        return None
    timeline = collapse_repeats(
        [_entry_from_row(row) for row in incident_rows.events(conn, incident_id)]
    )
    notes = [note_from_row(row) for row in incident_rows.notes(conn, incident_id)]
    members = incident_groups.members(conn, registry, incident_id, incident.model_ids)
    return IncidentDetail(**incident.model_dump(), timeline=timeline, notes=notes, members=members)


def collapse_repeats(entries: list[TimelineEntry]) -> list[TimelineEntry]:
    """One entry per run of identical server entries (same kind, model and text) not broken by anything a
    person did; the entry keeps the first one's id and time and says how many there were and the last time."""
    result: list[TimelineEntry] = []
    open_runs: dict[tuple[str, str, str | None, str], int] = {}  # identity -> index in result
    for entry in entries:
        if entry.kind in PERSON_KINDS:
            open_runs.clear()
            result.append(entry)
            continue
        identity = (entry.kind, entry.model_id, entry.actor, entry.text)
        index = open_runs.get(identity)
        if index is None or entry.kind in ("opened", "joined", "resolved"):
            open_runs[identity] = len(result)
            result.append(entry)
            continue
        first = result[index]
        result[index] = first.model_copy(update={"repeats": first.repeats + 1, "last_at": entry.at})
    return result


def list_incidents(
    conn: Connection,
    state: IncidentState | None,
    model_id: str | None,
    offset: int,
    limit: int,
) -> IncidentPage:
    total, rows = incident_rows.page(
        conn,
        state=None if state is None else state.value,
        model_id=model_id,
        offset=offset,
        limit=limit,
    )
    found = incident_groups.groups(conn, [row["id"] for row in rows])
    return IncidentPage(
        items=[incident_from_row(row, found.get(row["id"])) for row in rows],
        total=total,
        offset=offset,
        limit=limit,
    )


def add_entry(
    conn: Connection,
    incident_id: int,
    at: datetime,
    kind: str,
    model_id: str,
    actor: str | None,
    text: str,
    audit_id: int | None = None,
) -> TimelineEntry:
    """Append to an incident's timeline and bump its updated time."""
    entry_id = incident_rows.add_event(
        conn, incident_id, iso(at), kind, model_id, actor, text, audit_id
    )
    return TimelineEntry(
        id=entry_id,
        incident_id=incident_id,
        at=at,
        kind=kind,
        model_id=model_id,
        actor=actor,
        text=text,
        audit_id=audit_id,
    )


def announce(conn: Connection, incident_id: int, entry: TimelineEntry, at: datetime) -> int:
    """Emit incident.updated (or incident.opened for the first entry) with the incident as it is now."""
    incident = get_incident(conn, incident_id)
    assert incident is not None
    kind = EventType.INCIDENT_OPENED if entry.kind == "opened" else EventType.INCIDENT_UPDATED
    return append_event(
        conn, kind, at, entry.model_id, IncidentEventData(incident=incident, entry=entry)
    )


def open_or_join(
    conn: Connection,
    registry: Registry,
    model_id: str,
    severity: Severity,
    why: str,
    at: datetime,
    step: int,
    actor: str | None = None,
) -> int:
    """The incident this model is now part of: its own, an upstream one it joins, a shared-cause one of its
    surface it joins, or a new one. ``step`` is the bucket length in seconds."""
    current = model_rows.open_incident_id(conn, model_id)
    if current is not None:
        row = incident_rows.get(conn, current)
        assert row is not None  # models.open_incident_id points at an incident
        if _SEVERITY_RANK[severity] < _SEVERITY_RANK[Severity(row["severity"])]:
            incident_rows.set_severity(conn, current, severity.value)
        entry = add_entry(
            conn,
            current,
            at,
            "alert" if severity is Severity.PAGE else "unstable",
            model_id,
            actor,
            why,
        )
        announce(conn, current, entry, at)
        return current
    for upstream in registry.upstream_chain(model_id):
        upstream_incident = model_rows.open_incident_id(conn, upstream.id)
        if upstream_incident is None:
            continue
        return _join(
            conn,
            upstream_incident,
            model_id,
            severity,
            at,
            actor,
            f"{model_id} joined (downstream of {upstream.id}): {why}",
        )
    model = registry.get(model_id)
    began = incident_groups.trouble_began(conn, model_id, step, at)
    shared = incident_groups.find_shared(conn, registry, model, began, step)
    if shared is not None:
        label = incident_rows.mark_shared(conn, shared)
        incident_id = _join(
            conn,
            shared,
            model_id,
            severity,
            at,
            actor,
            f"{model_id} joined: its trouble began {began:%H:%M}, within a bucket of the others on"
            f" {label}, upstream healthy ({severity})",
        )
        joined = incident_rows.get(conn, incident_id)
        assert joined is not None
        count = len(json.loads(joined["model_ids"]))
        incident_rows.set_title(
            conn,
            incident_id,
            f"{label}: {count} models unstable together, {incident_groups.SHARED_NOTE}",
        )
        return incident_id
    incident_id = incident_rows.insert(
        conn, model_id, dumps([model_id]), severity.value, f"{model_id}: {why}", iso(at)
    )
    incident_groups.record_origin(conn, registry, incident_id, model, began)
    model_rows.set_open_incident(conn, model_id, incident_id)
    entry = add_entry(conn, incident_id, at, "opened", model_id, actor, why)
    announce(conn, incident_id, entry, at)
    return incident_id


def _join(
    conn: Connection,
    incident_id: int,
    model_id: str,
    severity: Severity,
    at: datetime,
    actor: str | None,
    text: str,
) -> int:
    """Add the model to an open incident (its severity the worse of the two) and say so on the timeline."""
    row = incident_rows.get(conn, incident_id)
    assert row is not None  # an open incident found by its models or its origin
    members = json.loads(row["model_ids"])
    if model_id not in members:
        members.append(model_id)
    worst = min(Severity(row["severity"]), severity, key=_SEVERITY_RANK.__getitem__)
    incident_rows.set_members(conn, incident_id, dumps(members), worst.value)
    model_rows.set_open_incident(conn, model_id, incident_id)
    entry = add_entry(conn, incident_id, at, "joined", model_id, actor, text)
    announce(conn, incident_id, entry, at)
    return incident_id


def resolve_if_clear(conn: Connection, incident_id: int, at: datetime) -> bool:
    """Resolve the incident when none of its models needs attention any more."""
    row = incident_rows.get(conn, incident_id)
    if row is None or row["state"] == IncidentState.RESOLVED:
        return False
    members = json.loads(row["model_ids"])
    if model_rows.count_in_trouble(conn, members):
        return False
    incident_rows.resolve(conn, incident_id, iso(at))
    model_rows.release_incident(conn, members, incident_id)
    entry = add_entry(
        conn,
        incident_id,
        at,
        "resolved",
        row["model_id"],
        None,
        "every model in the incident is stable again (or has no data) and no alert fires",
    )
    announce(conn, incident_id, entry, at)
    return True
