"""A model's situation as the store has it now: what the playbook's rules look at."""

from __future__ import annotations

import json

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.playbook import Neighbour, PastEscalation, Situation
from fleetdesk.domain.registry import Model, Role
from fleetdesk.domain.stability import Health, StabilitySums
from fleetdesk.server import incident_groups
from fleetdesk.server.backend import Backend
from fleetdesk.server.store import (
    Connection,
    incident_rows,
    live_state,
    model_rows,
    parse_iso,
)


def situation_of(conn: Connection, backend: Backend, model: Model) -> Situation:
    """The model, its live state and incident, its baseline, holdout and direct upstream models with their
    health, the experiments it holds out, its incident's shared cause and the pages already sent on it."""
    registry = backend.registry.models
    related = [
        m for m in (model.baseline_model_id, model.holdout_model_id, *model.upstream_model_ids) if m
    ]
    ids = [model.id, *dict.fromkeys(related)]
    rows = model_rows.situations(conn, ids)
    now = backend.clock.now()
    step = backend.config.bucket_seconds

    def neighbour(model_id: str | None) -> Neighbour | None:
        if model_id is None or model_id not in rows:
            return None
        row, other = rows[model_id], registry[model_id]
        health, attention = Health(row["health"]), Attention(row["attention"])
        sums = model_rows.last_sums(row)
        if health is Health.NO_DATA:
            sums = StabilitySums()  # its last bucket is not its latest closed one
        since = None
        if health is not Health.STABLE or attention is Attention.PAGE:
            since = incident_groups.trouble_began(conn, model_id, step, now)
        return Neighbour(
            model=other,
            live=live_state(row),
            health=health,
            attention=attention,
            open_incident_id=row["open_incident_id"],
            calibration=sums.calibration,
            normalized_entropy=sums.normalized_entropy,
            bands=backend.config.bands_for(other),
            alerts=tuple(json.loads(row["alerts"])),
            budget_remaining=row["budget_remaining"],
            since=since,
        )

    own = rows[model.id]
    incident_id = own["open_incident_id"]
    acknowledged_by = None
    if incident_id is not None:
        found = incident_rows.get(conn, incident_id)
        if found is not None and found["state"] == "acknowledged":
            acknowledged_by = found["acknowledged_by"] or "someone"
    upstream = tuple(n for n in map(neighbour, model.upstream_model_ids) if n is not None)
    holds_out = (
        tuple(m.id for m in registry.values() if m.holdout_model_id == model.id)
        if model.role is Role.HOLDOUT
        else ()
    )
    escalations = (
        ()
        if incident_id is None
        else tuple(
            PastEscalation(
                at=parse_iso(row["at"]),
                actor=row["actor"],
                team=row["team"],
                model_id=row["model_id"],
            )
            for row in incident_rows.pages(conn, incident_id)
        )
    )
    return Situation(
        model=model,
        live=live_state(own),
        incident_id=incident_id,
        acknowledged_by=acknowledged_by,
        baseline=neighbour(model.baseline_model_id),
        holdout=neighbour(model.holdout_model_id),
        upstream=upstream,
        holds_out=holds_out,
        shared_cause=incident_groups.shared_cause(
            conn, backend.registry, backend.config, incident_id
        ),
        escalations=escalations,
        as_of=now,
    )
