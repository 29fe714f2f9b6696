"""Playbook actions on the server: the playbook's plan (fleetdesk.domain.playbook), applied with its audit trail.

A plan is computed from the live state inside the same transaction that applies
it, so two racing consoles cannot both act on what they saw: the second one's
``expected_serving_model_id`` no longer matches and it gets 409 with the
current state. The same goes for the target's health: a baseline that turned
unhealthy since the engineer looked needs acknowledging (409 target-unhealthy),
and a holdout needs its override (422), whatever the console showed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from fleetdesk.domain import playbook
from fleetdesk.domain.registry import Model
from fleetdesk.domain.slo import Severity
from fleetdesk.server import incidents
from fleetdesk.server.auth import Principal
from fleetdesk.server.backend import Backend
from fleetdesk.server.events import append_event
from fleetdesk.server.paging import PagingError
from fleetdesk.server.problems import Problem
from fleetdesk.server.situation import situation_of
from fleetdesk.server.store import Connection, audit_log, dumps, incident_rows, iso, model_rows
from fleetdesk.wire import (
    AccessRole,
    ActionEventData,
    ActionKind,
    ActionRequest,
    ActionResult,
    AuditRecord,
    EscalationTarget,
    EventType,
    FieldError,
    LiveState,
    Page,
    ProblemType,
    StateChange,
)


@dataclass
class Plan:
    """The playbook's plan for one request, with the wire records it becomes."""

    kind: ActionKind
    model: Model
    before: LiveState
    rules: playbook.Plan
    changes: list[StateChange] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    incident_id: int | None = None

    @property
    def after(self) -> LiveState:
        for change in self.changes:
            if change.model_id == self.model.id:
                return change.after
        return self.before


def check_permission(principal: Principal, model: Model, kind: ActionKind) -> None:
    if kind is ActionKind.ESCALATE:
        principal.require(
            "escalate",
            principal.role in (AccessRole.ONCALL, AccessRole.ADMIN),
            f"escalate {model.id}",
        )
    else:
        principal.require_act(
            model.owner_team, f"{kind.value} {model.id} (owned by {model.owner_team})"
        )


def _invalid(field_name: str, message: str) -> Problem:
    return Problem(
        422,
        ProblemType.VALIDATION,
        f"{field_name}: {message}",
        title="Invalid request",
        errors=[FieldError(loc=["body", field_name], message=message)],
    )


def _check_request(kind: ActionKind, request: ActionRequest) -> None:
    """What the request itself must carry, whatever the rules say."""
    if kind.needs_reason and not request.reason.strip():
        raise _invalid(
            "reason", f"{kind.value} needs a reason (it goes into the audit log and the page)"
        )
    if kind.needs_expected_state and request.expected_serving_model_id is None:
        raise _invalid(
            "expected_serving_model_id",
            f"{kind.value} needs the serving model you saw, so a stale screen cannot act",
        )
    if kind.needs_text and not (request.text or "").strip():
        raise _invalid("text", "a note needs text")


def plan_action(
    conn: Connection,
    backend: Backend,
    model: Model,
    kind: ActionKind,
    request: ActionRequest,
    principal: Principal,
) -> Plan:
    """Check the request and the playbook's rules against the live state; raises Problem when not allowed.

    A dry run is planned without the consent check, so the engineer sees what needs acknowledging first.
    """
    _check_request(kind, request)
    situation = situation_of(conn, backend, model)
    before = situation.live
    if kind.needs_expected_state and request.expected_serving_model_id != before.serving_model_id:
        raise Problem(
            409,
            ProblemType.STALE_STATE,
            f"{model.id} is now served by {before.serving_model_id}, not"
            f" {request.expected_serving_model_id} as you saw; look again before acting",
            title="State changed",
            current=before,
        )
    try:
        rules = playbook.plan(kind, situation, request.target)
        if not request.dry_run:
            playbook.require(
                rules,
                playbook.Consent(
                    acknowledged_target=request.acknowledged_target,
                    holdout_override=request.holdout_override,
                ),
            )
    except playbook.Refusal as refusal:
        if refusal.needs == "acknowledgement":
            raise Problem(
                409,
                ProblemType.TARGET_UNHEALTHY,
                f"{model.id}: {refusal.reason}",
                title="Target unhealthy",
                target_health=refusal.target,
                suggested_action=ActionKind.ESCALATE.value,
            ) from None
        if refusal.needs == "override":
            raise Problem(
                422,
                ProblemType.HOLDOUT_OVERRIDE_REQUIRED,
                f"{refusal.reason}",
                title="Holdout override required",
                suggested_action=ActionKind.ESCALATE.value,
            ) from None
        if refusal.conflict and situation.incident_id is not None:
            raise Problem(
                409,
                ProblemType.ALREADY_ACKNOWLEDGED,
                f"incident {situation.incident_id} was {refusal.reason}",
                title="Already acknowledged",
                incident=incidents.get_incident(conn, situation.incident_id),
            ) from None
        raise Problem(
            422,
            ProblemType.ACTION_NOT_ALLOWED,
            f"{model.id}: {refusal.reason}",
            title="Action not allowed",
            suggested_action=refusal.instead.value if refusal.instead else None,
        ) from None
    result = Plan(
        kind=kind, model=model, before=before, rules=rules, incident_id=situation.incident_id
    )
    result.changes = [
        StateChange(model_id=c.model_id, before=c.before, after=c.after) for c in rules.changes
    ]
    result.pages = [
        Page(
            model_id=model.id,
            team=r.team,
            rotation=r.rotation,
            target=rules.target or EscalationTarget.OWNER,
            reason=request.reason,
            incident_id=situation.incident_id,
            delivered_via=backend.paging.name,
        )
        for r in rules.recipients
    ]
    return result


def result_of(
    plan: Plan,
    dry_run: bool,
    at: datetime,
    audit_id: int | None = None,
    event_id: int | None = None,
) -> ActionResult:
    rules = plan.rules
    return ActionResult(
        action=plan.kind,
        model_id=plan.model.id,
        dry_run=dry_run,
        at=at,
        summary=rules.would if dry_run else rules.done,
        changes=plan.changes,
        traffic_moved=rules.traffic_moved,
        traffic_to=rules.traffic_to,
        pages=plan.pages,
        incident_id=plan.incident_id,
        audit_id=audit_id,
        event_id=event_id,
        warnings=rules.warnings,
        target_health=rules.target_health,
        confirmation=playbook.confirmation_for(plan.kind, plan.model, rules) if dry_run else None,
        acknowledge_target=rules.acknowledge_target if dry_run else None,
        override_required=rules.override_required if dry_run else False,
    )


def apply(
    conn: Connection,
    backend: Backend,
    plan: Plan,
    request: ActionRequest,
    principal: Principal,
    key: str,
    at: datetime,
) -> ActionResult:
    """Make the planned change, with its audit record, timeline entry, pages and event (caller's transaction)."""
    model = plan.model
    for change in plan.changes:
        after = change.after
        model_rows.set_live(
            conn,
            change.model_id,
            after.serving_model_id,
            after.traffic_share,
            after.launch_phase.value,
            after.launch_halted,
            after.experiment_ended,
        )
    if plan.rules.opens_incident:
        plan.incident_id = incidents.open_or_join(
            conn,
            backend.registry,
            model.id,
            Severity.PAGE,
            f"escalated by {principal.user}: {request.reason}",
            at,
            backend.config.bucket_seconds,
            actor=principal.user,
        )
        plan.pages = [
            page.model_copy(update={"incident_id": plan.incident_id}) for page in plan.pages
        ]
    if plan.kind is ActionKind.ACK and plan.incident_id is not None:
        incident_rows.acknowledge(conn, plan.incident_id, principal.user, iso(at))
    detail: dict[str, object] = {
        "summary": plan.rules.done,
        "changes": [change.model_dump(mode="json") for change in plan.changes],
        "traffic_moved": plan.rules.traffic_moved,
        "traffic_to": plan.rules.traffic_to,
        "pages": [page.model_dump(mode="json") for page in plan.pages],
    }
    if plan.kind is ActionKind.ESCALATE:
        detail["target"] = request.target.value
    if plan.rules.target_health is not None:
        detail["target_health"] = plan.rules.target_health.model_dump(mode="json")
    if plan.rules.acknowledge_target is not None:
        detail["acknowledged_target"] = request.acknowledged_target
    if plan.rules.override_required:
        detail["holdout_override"] = True
    if plan.rules.warnings:
        detail["warnings"] = plan.rules.warnings
    if plan.kind is ActionKind.NOTE:
        detail["text"] = request.text
    audit_id = audit_log.append(
        conn,
        iso(at),
        principal.user,
        principal.role.value,
        plan.kind.value,
        model.id,
        request.reason,
        plan.before.model_dump_json(),
        plan.after.model_dump_json(),
        key,
        plan.incident_id,
        dumps(detail),
    )
    for page in plan.pages:
        incident_rows.add_page(
            conn,
            iso(at),
            page.model_id,
            page.team,
            page.rotation,
            page.target.value,
            page.reason,
            page.incident_id,
            principal.user,
            page.delivered_via,
        )
    if plan.kind is ActionKind.NOTE:
        incident_rows.add_note(
            conn, model.id, plan.incident_id, principal.user, iso(at), request.text
        )
    if plan.incident_id is not None:
        kind = {ActionKind.ACK: "ack", ActionKind.NOTE: "note"}.get(plan.kind, "action")
        text = request.text if plan.kind is ActionKind.NOTE and request.text else plan.rules.done
        if request.reason and plan.kind is not ActionKind.NOTE:
            text += f" — {request.reason}"
        entry = incidents.add_entry(
            conn, plan.incident_id, at, kind, model.id, principal.user, text, audit_id
        )
        incidents.announce(conn, plan.incident_id, entry, at)
    audit = AuditRecord(
        id=audit_id,
        at=at,
        actor=principal.user,
        role=principal.role,
        action=plan.kind.value,
        model_id=model.id,
        reason=request.reason,
        before=plan.before,
        after=plan.after,
        idempotency_key=key,
        incident_id=plan.incident_id,
        detail=detail,
    )
    # The event id is only known once the event row exists; the event carries the
    # result without it, the HTTP response carries it.
    provisional = result_of(plan, False, at, audit_id=audit_id)
    event_id = append_event(
        conn, EventType.ACTION, at, model.id, ActionEventData(result=provisional, audit=audit)
    )
    return result_of(plan, False, at, audit_id=audit_id, event_id=event_id)


def deliver_pages(backend: Backend, result: ActionResult) -> None:
    """After commit: hand each page to the paging target; record failures on the incident timeline."""
    for page in result.pages:
        try:
            backend.paging.deliver(page)
        except PagingError as error:
            if result.incident_id is None:
                continue
            at = backend.clock.now()
            with backend.write() as conn:
                entry = incidents.add_entry(
                    conn,
                    result.incident_id,
                    at,
                    "page_failed",
                    result.model_id,
                    None,
                    f"page to {page.team} via {backend.paging.name} failed: {error}",
                )
                incidents.announce(conn, result.incident_id, entry, at)
