"""A model's situation as the store has it now: what the playbook's rules look at."""

from __future__ import annotations

import sqlite3

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.playbook import Neighbour, Situation
from fleetdesk.domain.registry import Model
from fleetdesk.domain.stability import Health
from fleetdesk.server.backend import Backend
from fleetdesk.server.store import live_state


def situation_of(conn: sqlite3.Connection, backend: Backend, model: Model) -> Situation:
    """The model, its live state and incident, and its baseline, holdout and direct upstream models."""
    registry = backend.registry.models
    related = [m for m in (model.baseline_model_id, model.holdout_model_id, *model.upstream_model_ids) if m]
    ids = [model.id, *dict.fromkeys(related)]
    rows = {row["id"]: row for row in conn.execute(
        "SELECT id, serving_model_id, traffic_share, launch_phase, launch_halted, experiment_ended, health,"
        f" attention, open_incident_id FROM models WHERE id IN ({','.join('?' * len(ids))})", ids)}

    def neighbour(model_id: str | None) -> Neighbour | None:
        if model_id is None or model_id not in rows:
            return None
        row = rows[model_id]
        return Neighbour(model=registry[model_id], live=live_state(row), health=Health(row["health"]),
                         attention=Attention(row["attention"]), open_incident_id=row["open_incident_id"])

    own = rows[model.id]
    incident_id = own["open_incident_id"]
    acknowledged_by = None
    if incident_id is not None:
        found = conn.execute("SELECT state, acknowledged_by FROM incidents WHERE id = ?", (incident_id,)).fetchone()
        if found is not None and found["state"] == "acknowledged":
            acknowledged_by = found["acknowledged_by"] or "someone"
    upstream = tuple(n for n in map(neighbour, model.upstream_model_ids) if n is not None)
    return Situation(model=model, live=live_state(own), incident_id=incident_id, acknowledged_by=acknowledged_by,
                     baseline=neighbour(model.baseline_model_id), holdout=neighbour(model.holdout_model_id),
                     upstream=upstream)
