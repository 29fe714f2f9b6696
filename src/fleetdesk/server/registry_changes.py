"""Registry changes on the server: planned against the whole registry, refused with every violation, then made
with their audit records, a new registry version and one live event per model, in one transaction.

Every write path (create, update, retire, a declarative apply) comes down to one question: which registry is
wanted. The change set is the difference between it and the registry in the store, read inside the write
transaction, so two racing writers (on two replicas too) each plan against what the other committed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from fleetdesk.domain.registry import Model, Registry, RegistryError, RegistryViolation
from fleetdesk.domain.registry_change import ChangeKind, ModelChange, diff
from fleetdesk.domain.type_record import type_violations
from fleetdesk.server import slo_board
from fleetdesk.server.auth import Principal
from fleetdesk.server.backend import Backend
from fleetdesk.server.events import append_event
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import Connection, dumps, iso, registry_log
from fleetdesk.wire import (
    EventType,
    FieldError,
    ProblemType,
    RegistryChangeResult,
    RegistryEventData,
)

Wanted = Callable[[Mapping[str, Model]], dict[str, Model]]
"""From the current registry's records, the records wanted (raises Problem when the request cannot apply)."""


@dataclass(frozen=True)
class Plan:
    """The change set that turns the current registry into the wanted one, checked."""

    changes: list[ModelChange]
    registry: Registry | None
    """The registry once changed (None when nothing changes)."""


def current_models(conn: Connection, backend: Backend) -> dict[str, Model]:
    """The registry's records as the store has them now (the backend's own copy when it is the newest)."""
    latest = registry_log.latest_version(conn)
    if latest is None or latest.version == backend.registry_version:
        return dict(backend.registry.models)
    return registry_log.registry_at(conn, latest.version)


def plan(
    conn: Connection, backend: Backend, wanted: Wanted, principal: Principal, at: datetime
) -> Plan:
    """The checked change set; Problem 403 for a model the caller may not change, 422 with every violation."""
    current = current_models(conn, backend)
    target = wanted(current)
    changes = [_stamped(change, at) for change in diff(current, target)]
    for change in changes:
        for team in sorted(change.teams):
            principal.require_act(team, f"{change.kind.value} {change.model_id} (owned by {team})")
    if not changes:
        return Plan(changes=[], registry=None)
    after = {**current}
    for change in changes:
        if change.after is None:
            after.pop(change.model_id, None)
        else:
            after[change.model_id] = change.after
    violations = _change_violations(conn, changes)
    registry: Registry | None = None
    try:
        registry = Registry(after.values(), backend.config.vocabulary)
    except RegistryError as error:
        violations.extend(error.violations)
    _, attributes = type_violations(
        list(after.values()), backend.config.types, backend.config.vocabulary
    )
    violations.extend(attributes)
    if violations or registry is None:
        raise refused(violations)
    return Plan(changes=changes, registry=registry)


def refused(violations: list[RegistryViolation]) -> Problem:
    """422 listing every violation, each located as models.<id>.<field>."""
    count = len(violations)
    return Problem(
        422,
        ProblemType.REGISTRY_INVALID,
        f"the change would break {count} registry rule{'s' if count != 1 else ''}; nothing was changed",
        title="Registry change refused",
        errors=[
            FieldError(loc=["models", v.model_id, *v.field.split(".")], message=v.message)
            for v in violations
        ],
    )


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
    if not planned.changes or planned.registry is None:
        return RegistryChangeResult(dry_run=False, at=at, version=None, changes=[])
    version = registry_log.record_version(conn, at, principal.user, reason, planned.changes)
    audit_ids: list[int] = []
    keys = dict(backend.model_keys)
    for change in planned.changes:
        key_of_new = registry_log.apply_change(conn, change, backend.config.vocabulary)
        if key_of_new is not None:
            keys[change.model_id] = key_of_new
        elif change.kind is ChangeKind.RETIRE:
            keys.pop(change.model_id, None)
        audit_ids.append(_audit(conn, change, version, principal, reason, key, at))
        append_event(
            conn,
            EventType.REGISTRY_CHANGED,
            at,
            change.model_id,
            RegistryEventData(version=version, change=change, actor=principal.user, reason=reason),
        )
    registry = planned.registry
    # A new model gets its SLO state now, not at the next slot; a changed one is judged by its new record
    # (a tier change moves it to another tier's policy, and so in the fleet's worst-first order).
    judged = [c.model_id for c in planned.changes if c.kind is not ChangeKind.RETIRE]
    slo_board.refresh(conn, backend.config, registry, keys, at, judged)
    backend.on_commit(lambda: backend.adopt_registry(registry, version))
    return RegistryChangeResult(
        dry_run=False, at=at, version=version, changes=planned.changes, audit_ids=audit_ids
    )


def audit_action(change: ModelChange) -> str:
    """The audit log's action: a tier change is its own, so a post-mortem finds every one of them."""
    if change.kind is ChangeKind.UPDATE and change.tier_changed:
        return "registry.tier"
    return f"registry.{change.kind.value}"


def _audit(
    conn: Connection,
    change: ModelChange,
    version: int,
    principal: Principal,
    reason: str,
    key: str,
    at: datetime,
) -> int:
    # The audit columns before/after hold a model's live state (wire.AuditRecord); a registry change's
    # records go into its detail, with the version that made it.
    detail: dict[str, object] = {
        "version": version,
        "before": None if change.before is None else change.before.model_dump(mode="json"),
        "after": None if change.after is None else change.after.model_dump(mode="json"),
        "fields": [field.model_dump(mode="json") for field in change.fields],
    }
    if change.tier_changed and change.before is not None and change.after is not None:
        detail["tier"] = {
            "from": change.before.tier.value,
            "to": change.after.tier.value,
            "justification": change.after.tier_justification,
        }
    (audit_id,) = conn.execute(
        "INSERT INTO audit_log (at, actor, role, action, model_id, reason, before, after, idempotency_key,"
        " incident_id, detail) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, ?) RETURNING id",
        (
            iso(at),
            principal.user,
            principal.role.value,
            audit_action(change),
            change.model_id,
            reason,
            key,
            dumps(detail),
        ),
    ).fetchone()
    return int(audit_id)


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
    retired = [c.model_id for c in changes if c.kind is ChangeKind.RETIRE]
    for model_id, incident_id in registry_log.open_incident_ids(conn, retired).items():
        found.append(
            RegistryViolation(
                model_id=model_id,
                field="id",
                message=f"has open incident {incident_id}: a model cannot be retired during its incident",
            )
        )
    return found


def _stamped(change: ModelChange, at: datetime) -> ModelChange:
    """The change with the server's timestamps: created when first registered, updated now."""
    if change.after is None:
        return change
    created = change.before.created_at if change.before is not None else at
    after = change.after.model_copy(update={"created_at": created, "updated_at": at})
    return change.model_copy(update={"after": after})
