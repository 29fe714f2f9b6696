"""Registry changes on the server: planned against the whole registry, refused with every violation, then made
with their audit records, a new registry version and one live event per model or type record, in one
transaction.

Every write path (create, update, retire, a declarative apply; of models and of type records) comes down to one
question: which registry is wanted. The change set is the difference between it and the registry in the store,
read inside the write transaction, so two racing writers (on two replicas too) each plan against what the other
committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from fleetdesk.domain import launch
from fleetdesk.domain.model_type import ModelTypeError
from fleetdesk.domain.registry import Model, Registry, RegistryError, RegistryViolation
from fleetdesk.domain.registry_change import (
    ChangeKind,
    ModelChange,
    TypeChange,
    diff,
    type_diff,
)
from fleetdesk.domain.type_record import ModelTypeRecord, type_violations
from fleetdesk.server import slo_board
from fleetdesk.server.auth import Principal
from fleetdesk.server.backend import Backend
from fleetdesk.server.events import append_event
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import Connection, audit_log, dumps, iso, model_rows, registry_log
from fleetdesk.wire import (
    EventType,
    FieldError,
    ProblemType,
    RegistryChangeResult,
    RegistryEventData,
)


@dataclass(frozen=True)
class Records:
    """The registry's records: models by id and type records by type string."""

    models: dict[str, Model]
    types: dict[str, ModelTypeRecord]


Wanted = Callable[[Records], Records]
"""From the current registry's records, the records wanted (raises Problem when the request cannot apply)."""


@dataclass(frozen=True)
class Plan:
    """The change set that turns the current registry into the wanted one, checked."""

    changes: list[ModelChange] = field(default_factory=list)
    type_changes: list[TypeChange] = field(default_factory=list)
    registry: Registry | None = None
    """The registry once changed (None when nothing changes)."""
    types: dict[str, ModelTypeRecord] = field(default_factory=dict)
    """The type records once changed."""


def current_records(conn: Connection, backend: Backend) -> Records:
    """The registry's records as the store has them now (the backend's own copy when it is the newest)."""
    latest = registry_log.latest_version(conn)
    if latest is None or latest.version == backend.registry_version:
        return Records(dict(backend.registry.models), dict(backend.config.types))
    return Records(
        registry_log.registry_at(conn, latest.version),
        registry_log.types_at(conn, latest.version),
    )


def plan(
    conn: Connection, backend: Backend, wanted: Wanted, principal: Principal, at: datetime
) -> Plan:
    """The checked change set; Problem 403 for a record the caller may not change, 422 with every violation."""
    current = current_records(conn, backend)
    target = wanted(current)
    changes = [_stamped(change, at) for change in diff(current.models, target.models)]
    type_changes = type_diff(current.types, target.types)
    for what, teams in [(f"{c.kind.value} {c.model_id}", c.teams) for c in changes] + [
        (f"{c.kind.value} the record of type {c.type}", c.teams) for c in type_changes
    ]:
        for team in sorted(teams):
            principal.require_act(team, f"{what} (owned by {team})")
    if not changes and not type_changes:
        return Plan()
    models = {**current.models}
    for change in changes:
        if change.after is None:
            models.pop(change.model_id, None)
        else:
            models[change.model_id] = change.after
    vocabulary = backend.config.vocabulary
    errors = [_located(v) for v in _change_violations(conn, changes)]
    errors += _type_change_errors(backend, type_changes)
    registry: Registry | None = None
    try:
        registry = Registry(models.values(), vocabulary)
    except RegistryError as error:
        errors += [_located(v) for v in error.violations]
    _, attributes = type_violations(list(models.values()), target.types, vocabulary)
    errors += [_located(v) for v in attributes]
    if errors or registry is None:
        raise refused(errors)
    return Plan(
        changes=changes, type_changes=type_changes, registry=registry, types=dict(target.types)
    )


def refused(errors: list[FieldError]) -> Problem:
    """422 listing every violation, each located as models.<id>.<field> or types.<type>.<field>."""
    count = len(errors)
    return Problem(
        422,
        ProblemType.REGISTRY_INVALID,
        f"the change would break {count} registry rule{'s' if count != 1 else ''}; nothing was changed",
        title="Registry change refused",
        errors=errors,
    )


def violation(model_id: str, field_name: str, message: str) -> FieldError:
    """One violation of a model's record, located for the wire."""
    return _located(RegistryViolation(model_id=model_id, field=field_name, message=message))


def apply(
    conn: Connection,
    backend: Backend,
    planned: Plan,
    principal: Principal,
    reason: str,
    key: str,
    at: datetime,
) -> RegistryChangeResult:
    """Make the planned changes with their version, audit records and events (caller's transaction); the
    backend serves the changed registry from the commit on."""
    registry = planned.registry
    if registry is None:
        return RegistryChangeResult(dry_run=False, at=at, version=None, changes=[])
    version = registry_log.record_version(
        conn, at, principal.user, reason, planned.changes, planned.type_changes
    )
    audit_ids: list[int] = []
    keys = dict(backend.model_keys)
    for change in planned.changes:
        key_of_new = registry_log.apply_change(conn, change, backend.config.vocabulary)
        if key_of_new is not None:
            keys[change.model_id] = key_of_new
        elif change.kind is ChangeKind.RETIRE:
            keys.pop(change.model_id, None)
        detail = _model_detail(change, version)
        audit_ids.append(
            _audit(conn, change.model_id, audit_action(change), detail, principal, reason, key, at)
        )
        data = RegistryEventData(
            version=version, change=change, actor=principal.user, reason=reason
        )
        append_event(conn, EventType.REGISTRY_CHANGED, at, change.model_id, data)
    for type_change in planned.type_changes:
        action = f"registry.type-{type_change.kind.value}"
        detail = _type_detail(type_change, version)
        audit_ids.append(_audit(conn, type_change.type, action, detail, principal, reason, key, at))
        data = RegistryEventData(
            version=version, type_change=type_change, actor=principal.user, reason=reason
        )
        append_event(conn, EventType.REGISTRY_CHANGED, at, None, data)
    config = backend.config
    if planned.type_changes:
        registry_log.store_types(conn, planned.types)
        config = config.model_copy(update={"types": planned.types})
    # A new model gets its SLO state now, not at the next slot; a changed one is judged by its new record
    # (a tier change moves it to another tier's policy, and so in the fleet's worst-first order).
    judged = [c.model_id for c in planned.changes if c.kind is not ChangeKind.RETIRE]
    slo_board.refresh(conn, config, registry, keys, at, judged)
    backend.on_commit(lambda: backend.adopt_registry(registry, version, config))
    return RegistryChangeResult(
        dry_run=False,
        at=at,
        version=version,
        changes=planned.changes,
        type_changes=planned.type_changes,
        audit_ids=audit_ids,
    )


def audit_action(change: ModelChange) -> str:
    """The audit log's action: a tier change is its own, so a post-mortem finds every one of them."""
    if change.kind is ChangeKind.UPDATE and change.tier_changed:
        return "registry.tier"
    return f"registry.{change.kind.value}"


def _model_detail(change: ModelChange, version: int) -> dict[str, object]:
    # The audit columns before/after hold a model's live state (wire.AuditRecord); a registry change's
    # records go into its detail, with the version that made it.
    detail: dict[str, object] = {
        "version": version,
        "before": None if change.before is None else change.before.model_dump(mode="json"),
        "after": None if change.after is None else change.after.model_dump(mode="json"),
        "fields": [f.model_dump(mode="json") for f in change.fields],
    }
    if change.tier_changed and change.before is not None and change.after is not None:
        detail["tier"] = {
            "from": change.before.tier.value,
            "to": change.after.tier.value,
            "justification": change.after.tier_justification,
        }
    return detail


def _type_detail(change: TypeChange, version: int) -> dict[str, object]:
    return {
        "version": version,
        "before": None if change.before is None else change.before.model_dump(mode="json"),
        "after": None if change.after is None else change.after.model_dump(mode="json"),
        "fields": [f.model_dump(mode="json") for f in change.fields],
    }


def _audit(
    conn: Connection,
    subject: str,
    action: str,
    detail: dict[str, object],
    principal: Principal,
    reason: str,
    key: str,
    at: datetime,
) -> int:
    """One audit record of a registry change; ``subject`` is the model id or the type string."""
    return audit_log.append(
        conn,
        iso(at),
        principal.user,
        principal.role.value,
        action,
        subject,
        reason,
        None,
        None,
        key,
        None,
        dumps(detail),
    )


def _change_violations(conn: Connection, changes: list[ModelChange]) -> list[RegistryViolation]:
    """Rules about the change itself, beyond what the changed registry must satisfy."""
    found = []
    for change in changes:
        before, after = change.before, change.after
        if change.tier_changed and before is not None and after is not None:
            justification = after.tier_justification.strip()
            if not justification and after.tier.needs_justification:
                continue  # the registry's own rule for TIER0-TIER2 says so: one problem, one violation
            if not justification or justification == before.tier_justification.strip():
                found.append(
                    RegistryViolation(
                        model_id=change.model_id,
                        field="tier_justification",
                        message=f"a tier change ({before.tier} -> {after.tier}) needs a new"
                        " tier_justification saying why",
                    )
                )
    found += _launch_violations(conn, changes)
    retired = [c.model_id for c in changes if c.kind is ChangeKind.RETIRE]
    for model_id, incident_id in model_rows.open_incident_ids(conn, retired).items():
        found.append(
            RegistryViolation(
                model_id=model_id,
                field="id",
                message=f"has open incident {incident_id}: a model cannot be retired during its incident",
            )
        )
    return found


def _launch_violations(conn: Connection, changes: list[ModelChange]) -> list[RegistryViolation]:
    """A launch moves through its phases in order, and not at all while halted (domain.launch). A new model
    may enter at any phase: the fleet file declares launches already under way elsewhere."""
    moving = {
        c.model_id: (c.before, c.after)
        for c in changes
        if c.before is not None
        and c.after is not None
        and (
            c.before.launch_phase is not c.after.launch_phase
            or c.before.traffic_share != c.after.traffic_share
        )
    }
    halted = registry_log.halted_launches(conn, moving)
    found = []
    for model_id, (before, after) in moving.items():
        phase_moves = before.launch_phase is not after.launch_phase
        why_not = launch.phase_refusal(before.launch_phase, after.launch_phase)
        if model_id in halted:
            traffic_moves = before.traffic_share != after.traffic_share
            why_not = launch.halted_change_refusal(halted[model_id], phase_moves, traffic_moves)
        if why_not is not None:
            field_name = "launch_phase" if phase_moves else "traffic_share"
            found.append(RegistryViolation(model_id=model_id, field=field_name, message=why_not))
    return found


def _type_change_errors(backend: Backend, changes: list[TypeChange]) -> list[FieldError]:
    """A type record is keyed by a type string; its bands are copied into the monitoring bands at seeding,
    so a live change of them would not take effect: refused rather than recorded and ignored."""
    errors = []
    for change in changes:
        try:
            backend.config.vocabulary.parse(change.type)
        except ModelTypeError as error:
            errors.append(
                FieldError(
                    loc=["types", change.type],
                    message=f"not a model type ({error.part}: {error.message})",
                )
            )
        if any(f.field == "bands" for f in change.fields) or (
            change.kind is not ChangeKind.UPDATE
            and any(r is not None and r.bands for r in (change.before, change.after))
        ):
            errors.append(
                FieldError(
                    loc=["types", change.type, "bands"],
                    message="a type's bands are set in the fleet file at seeding; they cannot change live",
                )
            )
    return errors


def _located(found: RegistryViolation) -> FieldError:
    return FieldError(
        loc=["models", found.model_id, *found.field.split(".")], message=found.message
    )


def _stamped(change: ModelChange, at: datetime) -> ModelChange:
    """The change with the server's timestamps: created when first registered, updated now."""
    if change.after is None:
        return change
    created = change.before.created_at if change.before is not None else at
    after = change.after.model_copy(update={"created_at": created, "updated_at": at})
    return change.model_copy(update={"after": after})
