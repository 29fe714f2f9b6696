"""Shared-cause incidents: models of one app and surface whose trouble began together share one incident.

When every funnel stage of a surface (retrieval, early- and late-stage ranking) turns unstable in the
same or the next bucket while their upstream models are healthy, the cause is most likely something
they share — the surface's logging or label pipeline — not six separate regressions. So the second
and later models join the first one's incident, which is then marked "shared cause suspected", and
one acknowledgement and one escalation cover them all. Upstream-caused trouble is grouped under the
upstream model's incident instead (``incidents.open_or_join`` looks there first), and an upstream
model's incident is never a surface group.

Each incident's origin — the app, surface and first bad bucket of the model it opened on — is kept in
``incident_origins`` (its statements in ``store/incident_rows.py``).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from fleetdesk.domain.model_type import ModelTypeError
from fleetdesk.domain.playbook import Recipient, SharedCause
from fleetdesk.domain.registry import Model, Registry, Role
from fleetdesk.server.store import (
    STABLE,
    Connection,
    FleetConfig,
    buckets,
    epoch,
    from_epoch,
    incident_rows,
    iso,
    model_rows,
    parse_iso,
)
from fleetdesk.wire import Attention, Health, IncidentGroup, IncidentMember

SHARED_NOTE = "shared cause suspected"


def trouble_began(conn: Connection, model_id: str, step: int, now: datetime) -> datetime | None:
    """The start of the model's first bucket after its last stable one: when its current trouble began.

    None while its latest closed bucket is stable, or when it has no buckets at all.
    """
    key = model_rows.key_of(conn, model_id)
    if key is None:
        return None
    last_slot = epoch(now) - epoch(now) % step - step
    stable = buckets.last_start_with(conn, key, STABLE)
    if stable is None:
        first = buckets.first_start(conn, key)
        return None if first is None else from_epoch(first)
    if stable >= last_slot:
        return None
    return from_epoch(stable + step)


def surface_of(registry: Registry, model: Model) -> tuple[str, str, str] | None:
    """(app, surface, label such as 'Instagram · Feed') of a model's type; None when it does not parse."""
    vocabulary = registry.vocabulary
    try:
        model_type = vocabulary.parse(model.type)
    except ModelTypeError:
        return None
    label = f"{vocabulary.apps.get(model_type.app, model_type.app)} · "
    label += vocabulary.surfaces.get(model_type.surface, model_type.surface)
    return model_type.app, model_type.surface, label


def record_origin(
    conn: Connection,
    registry: Registry,
    incident_id: int,
    model: Model,
    began_at: datetime | None,
) -> None:
    """Remember where a new incident's trouble began (its opening model's surface and first bad bucket)."""
    surface = surface_of(registry, model)
    if surface is None:
        return
    incident_rows.add_origin(
        conn, incident_id, *surface, None if began_at is None else iso(began_at)
    )


def find_shared(
    conn: Connection, registry: Registry, model: Model, began_at: datetime | None, step: int
) -> int | None:
    """The open incident this model's trouble likely shares a cause with: opened on the same app and surface,
    its trouble begun in the same or the next bucket as this model's, and not an upstream model's incident
    (no downstream model joined it). None: nothing to join."""
    surface = surface_of(registry, model)
    if surface is None or began_at is None or model.role is Role.FOUNDATION:
        return None
    bucket = timedelta(seconds=step)
    return incident_rows.sharing_candidate(
        conn, surface[0], surface[1], iso(began_at - bucket), iso(began_at + bucket)
    )


def groups(conn: Connection, incident_ids: list[int]) -> dict[int, IncidentGroup]:
    """The shared-cause groups among these incidents, by incident id."""
    return {
        row["incident_id"]: IncidentGroup(
            app=row["app"],
            surface=row["surface"],
            label=row["label"],
            started_at=parse_iso(row["began_at"] or row["opened_at"]),
            note=SHARED_NOTE,
        )
        for row in incident_rows.shared_origins(conn, incident_ids)
    }


def members(
    conn: Connection, registry: Registry, incident_id: int, model_ids: list[str]
) -> list[IncidentMember]:
    """Every model of the incident with its state now, and when it opened or joined the incident."""
    if not model_ids:
        return []
    rows = model_rows.states(conn, model_ids)
    joined = {
        model_id: parse_iso(at)
        for model_id, at in incident_rows.joined_at(conn, incident_id).items()
    }
    result = []
    for model_id in model_ids:
        model, row = registry.models.get(model_id), rows.get(model_id)
        if model is None or row is None:
            continue
        result.append(
            IncidentMember(
                model_id=model_id,
                tier=model.tier,
                role=model.role,
                stage=registry.vocabulary.stage(registry.vocabulary.parse(model.type)),
                owner_team=model.owner_team,
                health=Health(row["health"]),
                attention=Attention(row["attention"]),
                joined_at=joined.get(model_id),
                open=row["open_incident_id"] == incident_id,
            )
        )
    return result


def shared_cause(
    conn: Connection, registry: Registry, config: FleetConfig, incident_id: int | None
) -> SharedCause | None:
    """The playbook's view of a shared-cause incident: its members, their teams and the app's pipeline rotation."""
    if incident_id is None:
        return None
    group = groups(conn, [incident_id]).get(incident_id)
    if group is None:
        return None
    row = incident_rows.get(conn, incident_id)
    assert row is not None  # it has a group
    member_ids = tuple(json.loads(row["model_ids"]))
    teams = tuple(
        dict.fromkeys(
            Recipient(m.owner_team, m.oncall_rotation)
            for m in (registry.models.get(i) for i in member_ids)
            if m is not None
        )
    )
    pipeline = config.pipelines.get(group.app)
    return SharedCause(
        incident_id=incident_id,
        app=group.app,
        surface=group.surface,
        label=group.label,
        started_at=group.started_at,
        members=member_ids,
        teams=teams,
        pipeline=Recipient(pipeline.team, pipeline.rotation) if pipeline is not None else None,
    )
