"""Read side: building the wire views of models, lineage, fleet summary and audit from the store."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fleetdesk.domain import playbook
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.slo import SloStatus
from fleetdesk.domain.stability import Health, signals
from fleetdesk.server import incident_groups, task_buckets
from fleetdesk.server.backend import Backend
from fleetdesk.server.problems import Problem
from fleetdesk.server.situation import situation_of
from fleetdesk.server.store import (
    Connection,
    Row,
    audit_log,
    from_epoch,
    incident_rows,
    iso,
    live_state,
    model_rows,
    parse_iso,
    registry_log,
)
from fleetdesk.wire import (
    Attention,
    AuditPage,
    AuditRecord,
    DecodedType,
    FleetSummary,
    IncidentGroup,
    Lineage,
    LineageEntry,
    LiveState,
    ModelDetail,
    ModelPage,
    ModelSort,
    ModelSummary,
    ProblemType,
)


def model_or_404(backend: Backend, model_id: str) -> Model:
    model = backend.registry.models.get(model_id)
    if model is None:
        suggestions = backend.registry.suggest(model_id)
        hint = f" (did you mean: {', '.join(suggestions)}?)" if suggestions else ""
        raise Problem(
            404,
            ProblemType.NOT_FOUND,
            f"no model {model_id!r}{hint}",
            title="Unknown model",
            suggestions=suggestions,
        )
    return model


def decoded_type(backend: Backend, model: Model) -> DecodedType:
    vocabulary = backend.config.vocabulary
    model_type = vocabulary.parse(model.type)
    position = vocabulary.positions[model_type.position]
    return DecodedType(
        type=model.type,
        app=model_type.app,
        surface=model_type.surface,
        position=model_type.position,
        architecture=model_type.architecture,
        app_label=vocabulary.apps[model_type.app],
        surface_label=vocabulary.surfaces[model_type.surface],
        position_label=position.label,
        architecture_label=vocabulary.architectures[model_type.architecture],
        stage=position.stage,
        description=vocabulary.describe(model_type),
    )


def _registry_part(backend: Backend, model_id: str) -> dict[str, Any]:
    """A model's summary fields that come from the registry alone, decoded once per registry version."""
    # The memo before the registry: adopt_registry replaces the registry, then the memo, so a memo read
    # first is never newer than the registry read after it (a part may land in a memo just discarded).
    memo, types = backend.registry_memo, backend.type_memo
    part: dict[str, Any] | None = memo.get(model_id)
    if part is None:
        model = backend.registry.models[model_id]
        decoded = types.get(model.type)
        if decoded is None:
            vocabulary = backend.config.vocabulary
            model_type = vocabulary.parse(model.type)
            decoded = types[model.type] = (
                model_type.app,
                model_type.surface,
                vocabulary.stage(model_type),
            )
        app, surface, stage = decoded
        part = memo[model_id] = {
            "id": model.id,
            "type": model.type,
            "app": app,
            "surface": surface,
            "stage": stage,
            "tier": model.tier,
            "role": model.role,
            "owner_team": model.owner_team,
            "oncall_rotation": model.oncall_rotation,
            "baseline_model_id": model.baseline_model_id,
            "purpose": model.purpose,
        }
    return part


def summary(backend: Backend, row: Row) -> ModelSummary:
    last = row["last_bucket_start"]
    calibration, ne = model_rows.last_signals(row) or (None, None)
    return ModelSummary(
        **_registry_part(backend, row["id"]),
        health=Health(row["health"]),
        calibration=calibration,
        normalized_entropy=ne,
        attention=Attention(row["attention"]),
        live=live_state(row),
        budget_remaining=row["budget_remaining"],
        max_burn_rate=row["max_burn_rate"],
        alerts=json.loads(row["alerts"]),
        open_incident_id=row["open_incident_id"],
        last_bucket_start=None if last is None else from_epoch(last),
        incident_group=_group(row["incident_group"]),
    )


def _group(packed: str | None) -> IncidentGroup | None:
    if packed is None:
        return None
    app, surface, label, began_at = json.loads(packed)
    return (
        IncidentGroup(
            app=app,
            surface=surface,
            label=label,
            started_at=parse_iso(began_at),
            note=incident_groups.SHARED_NOTE,
        )
        if began_at
        else None
    )


def list_models(
    backend: Backend,
    *,
    app: str | None,
    surface: str | None,
    tiers: list[Tier],
    role: Role | None,
    health: Health | None,
    query: str | None,
    sort: ModelSort,
    offset: int,
    limit: int,
) -> ModelPage:
    with backend.store.read() as conn:
        total, rows = model_rows.page(
            conn,
            app=app,
            surface=surface,
            tiers=[t.value for t in tiers],
            role=role,
            health=health,
            query=query,
            sort=sort,
            offset=offset,
            limit=limit,
        )
    return ModelPage(
        items=[summary(backend, row) for row in rows], total=total, offset=offset, limit=limit
    )


def fleet_rows(backend: Backend, offset: int, limit: int) -> bytes:
    """A page of the fleet table, worst first, as the JSON of ``ModelRows``: encoded here, because a pydantic
    row per model and FastAPI's serializing of them were four fifths of a whole-fleet load's server time."""
    with backend.store.read() as conn:
        total, found = model_rows.table_page(conn, offset, limit)
    rows = []
    for model_id, health, attention, budget, incident, weight, *sums, packed in found:
        part = _registry_part(backend, model_id)
        group = _group(packed)
        signal = None if weight is None else signals(weight, *sums)
        rows.append(
            (
                part["id"],
                part["type"],
                part["app"],
                part["surface"],
                part["stage"],
                part["tier"],
                part["role"],
                part["owner_team"],
                health,
                attention,
                budget,
                *(signal or (None, None)),
                incident,
                None if group is None else group.label,
                None if group is None else iso(group.started_at),
            )
        )
    page = {"rows": rows, "total": total, "offset": offset, "limit": limit}
    return json.dumps(page, separators=(",", ":"), allow_nan=False).encode()


def model_detail(backend: Backend, model_id: str) -> ModelDetail:
    model = model_or_404(backend, model_id)
    with backend.store.read() as conn:
        row = model_rows.detail(conn, model_id)
        assert row is not None  # a model of the registry has its row
        situation = situation_of(conn, backend, model)
        tasks = task_buckets.latest(
            conn, backend.config, model, backend.model_keys[model.id], row["last_bucket_start"]
        )
        since = launch_since(conn, model)
    actions = playbook.options(situation)
    baseline = playbook.fallback_health(situation)
    last = row["last_bucket_start"]
    slo = _current(backend, SloStatus.model_validate_json(row["slo"]))
    return ModelDetail(
        model=model,
        decoded=decoded_type(backend, model),
        live=live_state(row),
        health=Health(row["health"]),
        attention=Attention(row["attention"]),
        bands=backend.config.bands_for(model),
        slo=slo,
        paging=backend.config.policy.verdict(model, slo),
        type_record=backend.config.types.get(model.type),
        open_incident_id=row["open_incident_id"],
        last_bucket_start=None if last is None else from_epoch(last),
        actions=actions,
        baseline_health=baseline,
        holdout_health=playbook.holdout_health(situation),
        fallback=playbook.fallback_words(model, baseline),
        tasks=tasks,
        launch_since=since,
    )


def launch_since(conn: Connection, model: Model) -> datetime | None:
    """When the model entered its launch phase: the oldest version of the newest run of versions in that
    phase (None when it has been in it since seeding, whose time says nothing about the launch)."""
    since = None
    for version, _, record in registry_log.model_history(conn, model.id):
        if record is None or record.launch_phase is not model.launch_phase:
            break
        since = None if version.version == 0 else version.at
    return since


def slo_status(backend: Backend, model_id: str) -> SloStatus:
    model_or_404(backend, model_id)
    stored = model_rows.slo(backend.store.connection(), model_id)
    return _current(backend, SloStatus.model_validate_json(stored))


def _current(backend: Backend, status: SloStatus) -> SloStatus:
    """A stored status still holds at the last fleet-wide refresh (it is only rewritten when it changes)."""
    at = backend.evaluated_at
    return (
        status
        if at is None or status.evaluated_at >= at
        else status.model_copy(update={"evaluated_at": at})
    )


def lineage(backend: Backend, model_id: str) -> Lineage:
    model_or_404(backend, model_id)
    upstream = backend.registry.upstream_chain(model_id)
    downstream = sorted(backend.registry.downstream(model_id), key=lambda m: (m.tier.rank, m.id))
    ids = [m.id for m in upstream + downstream]
    states = model_rows.states(backend.store.connection(), ids)

    def entry(m: Model) -> LineageEntry:
        state = states[m.id]
        return LineageEntry(
            id=m.id,
            type=m.type,
            tier=m.tier,
            role=m.role,
            owner_team=m.owner_team,
            health=Health(state["health"]),
            attention=Attention(state["attention"]),
        )

    return Lineage(
        model_id=model_id,
        upstream=[entry(m) for m in upstream],
        downstream=[entry(m) for m in downstream],
        blast_radius=backend.registry.blast_radius(model_id),
    )


def fleet_summary(backend: Backend, limit: int) -> FleetSummary:
    counts = {health: {tier: 0 for tier in Tier} for health in Health}
    attention = {level: 0 for level in Attention}
    with backend.store.read() as conn:
        for health, tier, level, n in model_rows.counts(conn):
            counts[Health(health)][Tier(tier)] += n
            attention[Attention(level)] += n
        open_incidents = incident_rows.open_count(conn)
        rows = model_rows.worst(conn, limit)
    return FleetSummary(
        evaluated_at=backend.clock.now(),
        total_models=len(backend.registry),
        counts=counts,
        attention=attention,
        open_incidents=open_incidents,
        worst=[summary(backend, row) for row in rows],
    )


def audit_record(row: Row) -> AuditRecord:
    return AuditRecord(
        id=row["id"],
        at=parse_iso(row["at"]),
        actor=row["actor"],
        role=row["role"],
        action=row["action"],
        model_id=row["model_id"],
        reason=row["reason"],
        before=None if row["before"] is None else LiveState.model_validate_json(row["before"]),
        after=None if row["after"] is None else LiveState.model_validate_json(row["after"]),
        idempotency_key=row["idempotency_key"],
        incident_id=row["incident_id"],
        detail=json.loads(row["detail"]),
    )


def audit_page(
    backend: Backend,
    *,
    model_id: str | None,
    actor: str | None,
    action: str | None,
    since: datetime | None,
    until: datetime | None,
    offset: int,
    limit: int,
) -> AuditPage:
    with backend.store.read() as conn:
        total, rows = audit_log.page(
            conn,
            model_id=model_id,
            actor=actor,
            action=action,
            since=None if since is None else iso(since),
            until=None if until is None else iso(until),
            offset=offset,
            limit=limit,
        )
    return AuditPage(
        items=[audit_record(row) for row in rows], total=total, offset=offset, limit=limit
    )
