"""Playbook actions: registry rules, dry-run plans, and applying a plan with its audit trail.

A plan is computed from the live state inside the same transaction that applies
it, so two racing consoles cannot both act on what they saw: the second one's
``expected_serving_model_id`` no longer matches and it gets 409 with the
current state.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

from fleetdesk.domain.registry import LaunchPhase, Model, Role
from fleetdesk.domain.slo import Severity
from fleetdesk.server import incidents
from fleetdesk.server.auth import Principal
from fleetdesk.server.backend import Backend
from fleetdesk.server.events import append_event
from fleetdesk.server.paging import PagingError
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import dumps, iso
from fleetdesk.server.views import live_state
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
    IncidentState,
    LiveState,
    Page,
    ProblemType,
    StateChange,
)


@dataclass
class Plan:
    """What an action would do, computed against the live state."""

    kind: ActionKind
    model: Model
    before: LiveState
    changes: list[StateChange] = field(default_factory=list)
    traffic_moved: float = 0.0
    traffic_to: str | None = None
    pages: list[Page] = field(default_factory=list)
    incident_id: int | None = None
    opens_incident: bool = False
    done: str = ""  # summary once done
    would: str = ""  # summary as a dry run

    @property
    def after(self) -> LiveState:
        for change in self.changes:
            if change.model_id == self.model.id:
                return change.after
        return self.before


def check_permission(principal: Principal, model: Model, kind: ActionKind) -> None:
    if kind is ActionKind.ESCALATE:
        principal.require("escalate", principal.role in (AccessRole.ONCALL, AccessRole.ADMIN),
                          f"escalate {model.id}")
    else:
        principal.require_act(model.owner_team, f"{kind.value} {model.id} (owned by {model.owner_team})")


def _not_allowed(detail: str, suggested_action: str | None = None) -> Problem:
    return Problem(422, ProblemType.ACTION_NOT_ALLOWED, detail, title="Action not allowed",
                   suggested_action=suggested_action)


def _invalid(field_name: str, message: str) -> Problem:
    return Problem(422, ProblemType.VALIDATION, f"{field_name}: {message}", title="Invalid request",
                   errors=[FieldError(loc=["body", field_name], message=message)])


def _moved_to_baseline(conn: sqlite3.Connection, plan: Plan, baseline_id: str, **extra: object) -> None:
    share = plan.before.traffic_share
    plan.changes.append(StateChange(model_id=plan.model.id, before=plan.before, after=plan.before.model_copy(
        update={"serving_model_id": baseline_id, "traffic_share": 0.0, **extra})))
    row = conn.execute("SELECT * FROM models WHERE id = ?", (baseline_id,)).fetchone()
    baseline_before = live_state(row)
    plan.changes.append(StateChange(model_id=baseline_id, before=baseline_before, after=baseline_before.model_copy(
        update={"traffic_share": round(min(1.0, baseline_before.traffic_share + share), 9)})))
    plan.traffic_moved = share
    plan.traffic_to = baseline_id


def plan_action(conn: sqlite3.Connection, backend: Backend, model: Model, kind: ActionKind,
                request: ActionRequest, principal: Principal) -> Plan:
    """Check the rules against the live state and work out every change; raises Problem when not allowed."""
    row = conn.execute("SELECT * FROM models WHERE id = ?", (model.id,)).fetchone()
    plan = Plan(kind=kind, model=model, before=live_state(row), incident_id=row["open_incident_id"])
    if kind.needs_reason and not request.reason.strip():
        raise _invalid("reason", f"{kind.value} needs a reason (it goes into the audit log and the page)")
    if kind.needs_expected_state and request.expected_serving_model_id is None:
        raise _invalid("expected_serving_model_id",
                       f"{kind.value} needs the serving model you saw, so a stale screen cannot act")
    if kind is ActionKind.ROLLBACK and model.baseline_model_id is None:
        raise _not_allowed(f"{model.id} has no baseline to roll back to: no baseline: escalate instead",
                           suggested_action=ActionKind.ESCALATE.value)
    if kind is ActionKind.END_EXPERIMENT and model.role is not Role.EXPERIMENT:
        raise _not_allowed(f"{model.id} is a {model.role.value}, not an experiment: nothing to end",
                           suggested_action=ActionKind.ROLLBACK.value if model.baseline_model_id else
                           ActionKind.ESCALATE.value)
    if kind.needs_expected_state and request.expected_serving_model_id != plan.before.serving_model_id:
        raise Problem(409, ProblemType.STALE_STATE,
                      f"{model.id} is now served by {plan.before.serving_model_id}, not"
                      f" {request.expected_serving_model_id} as you saw; look again before acting",
                      title="State changed", current=plan.before)
    share = f"{plan.before.traffic_share:.1%}"
    if kind is ActionKind.ROLLBACK:
        baseline = model.baseline_model_id
        assert baseline is not None
        if plan.before.serving_model_id != model.id:
            raise _not_allowed(f"{model.id} is already rolled back: {plan.before.serving_model_id} serves its traffic")
        _moved_to_baseline(conn, plan, baseline)
        plan.done = f"Rolled back {model.id}: {share} of traffic moved to baseline {baseline}"
        plan.would = f"Would roll back {model.id}: {share} of traffic would move to baseline {baseline}"
    elif kind is ActionKind.END_EXPERIMENT:
        baseline = model.baseline_model_id
        assert baseline is not None  # the registry requires one for experiments
        if plan.before.experiment_ended:
            raise _not_allowed(f"experiment {model.id} has already ended")
        _moved_to_baseline(conn, plan, baseline, experiment_ended=True)
        plan.done = f"Ended experiment {model.id}: {share} of traffic back to baseline {baseline}"
        plan.would = f"Would end experiment {model.id}: {share} of traffic would go back to baseline {baseline}"
    elif kind is ActionKind.HALT_LAUNCH:
        if plan.before.launch_phase is not LaunchPhase.SCALE_UP:
            raise _not_allowed(f"{model.id} is in launch phase {plan.before.launch_phase.value}; only a"
                               " scale-up can be halted")
        if plan.before.launch_halted:
            raise _not_allowed(f"the launch of {model.id} is already halted")
        plan.changes.append(StateChange(model_id=model.id, before=plan.before,
                                        after=plan.before.model_copy(update={"launch_halted": True})))
        plan.done = f"Halted the launch of {model.id} at {share} of traffic"
        plan.would = f"Would halt the launch of {model.id} at {share} of traffic"
    elif kind is ActionKind.ESCALATE:
        if request.target is EscalationTarget.UPSTREAM:
            upstream = [backend.registry.models[m] for m in model.upstream_model_ids]
            if not upstream:
                raise _not_allowed(f"{model.id} has no upstream model: escalate to its owner instead",
                                   suggested_action="escalate target=owner")
            recipients = [(u.owner_team, u.oncall_rotation) for u in upstream]
        else:
            recipients = [(model.owner_team, model.oncall_rotation)]
        plan.pages = [
            Page(model_id=model.id, team=team, rotation=rotation, target=request.target, reason=request.reason,
                 incident_id=plan.incident_id, delivered_via=backend.paging.name)
            for team, rotation in dict.fromkeys(recipients)
        ]
        plan.opens_incident = plan.incident_id is None
        who = ", ".join(f"{p.team} ({p.rotation})" for p in plan.pages)
        plan.done = f"Paged {who} about {model.id}"
        plan.would = f"Would page {who} about {model.id}" + (" and open an incident" if plan.opens_incident else "")
    elif kind is ActionKind.ACK:
        if plan.incident_id is None:
            raise _not_allowed(f"{model.id} has no open incident to acknowledge")
        incident = incidents.get_incident(conn, plan.incident_id)
        assert incident is not None
        if incident.state is IncidentState.ACKNOWLEDGED:
            raise Problem(409, ProblemType.ALREADY_ACKNOWLEDGED,
                          f"incident {incident.id} was already acknowledged by {incident.acknowledged_by}",
                          title="Already acknowledged", incident=incident)
        plan.done = f"Acknowledged incident {incident.id} on {model.id}"
        plan.would = f"Would acknowledge incident {incident.id} on {model.id}"
    elif kind is ActionKind.NOTE:
        if not (request.text or "").strip():
            raise _invalid("text", "a note needs text")
        where = f"incident {plan.incident_id}" if plan.incident_id is not None else "the model (no open incident)"
        plan.done = f"Added a note on {model.id} to {where}"
        plan.would = f"Would add a note on {model.id} to {where}"
    return plan


def result_of(plan: Plan, dry_run: bool, at: datetime, audit_id: int | None = None,
              event_id: int | None = None) -> ActionResult:
    return ActionResult(
        action=plan.kind, model_id=plan.model.id, dry_run=dry_run, at=at, summary=plan.would if dry_run else plan.done,
        changes=plan.changes, traffic_moved=plan.traffic_moved, traffic_to=plan.traffic_to, pages=plan.pages,
        incident_id=plan.incident_id, audit_id=audit_id, event_id=event_id,
    )


def apply(conn: sqlite3.Connection, backend: Backend, plan: Plan, request: ActionRequest, principal: Principal,
          key: str, at: datetime) -> ActionResult:
    """Make the planned change, with its audit record, timeline entry, pages and event (caller's transaction)."""
    model = plan.model
    for change in plan.changes:
        after = change.after
        conn.execute(
            "UPDATE models SET serving_model_id = ?, traffic_share = ?, launch_phase = ?, launch_halted = ?,"
            " experiment_ended = ? WHERE id = ?",
            (after.serving_model_id, after.traffic_share, after.launch_phase.value, int(after.launch_halted),
             int(after.experiment_ended), change.model_id),
        )
    if plan.opens_incident:
        plan.incident_id = incidents.open_or_join(
            conn, backend.registry, model.id, Severity.PAGE, f"escalated by {principal.user}: {request.reason}", at,
            actor=principal.user)
        plan.pages = [page.model_copy(update={"incident_id": plan.incident_id}) for page in plan.pages]
    if plan.kind is ActionKind.ACK and plan.incident_id is not None:
        incidents.acknowledge(conn, plan.incident_id, principal.user, at)
    detail: dict[str, object] = {
        "summary": plan.done,
        "changes": [change.model_dump(mode="json") for change in plan.changes],
        "traffic_moved": plan.traffic_moved,
        "traffic_to": plan.traffic_to,
        "pages": [page.model_dump(mode="json") for page in plan.pages],
    }
    if plan.kind is ActionKind.ESCALATE:
        detail["target"] = request.target.value
    if plan.kind is ActionKind.NOTE:
        detail["text"] = request.text
    cursor = conn.execute(
        "INSERT INTO audit_log (at, actor, role, action, model_id, reason, before, after, idempotency_key,"
        " incident_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (iso(at), principal.user, principal.role.value, plan.kind.value, model.id, request.reason,
         plan.before.model_dump_json(), plan.after.model_dump_json(), key, plan.incident_id, dumps(detail)),
    )
    audit_id = int(cursor.lastrowid or 0)
    for page in plan.pages:
        conn.execute(
            "INSERT INTO pages (at, model_id, team, rotation, target, reason, incident_id, actor, delivered_via)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (iso(at), page.model_id, page.team, page.rotation, page.target.value, page.reason, page.incident_id,
             principal.user, page.delivered_via),
        )
    if plan.kind is ActionKind.NOTE:
        conn.execute("INSERT INTO notes (model_id, incident_id, author, at, text) VALUES (?, ?, ?, ?, ?)",
                     (model.id, plan.incident_id, principal.user, iso(at), request.text))
    if plan.incident_id is not None:
        kind = {ActionKind.ACK: "ack", ActionKind.NOTE: "note"}.get(plan.kind, "action")
        text = request.text if plan.kind is ActionKind.NOTE and request.text else plan.done
        if request.reason and plan.kind is not ActionKind.NOTE:
            text += f" — {request.reason}"
        entry = incidents.add_entry(conn, plan.incident_id, at, kind, model.id, principal.user, text, audit_id)
        incidents.announce(conn, plan.incident_id, entry, at)
    audit = AuditRecord(
        id=audit_id, at=at, actor=principal.user, role=principal.role, action=plan.kind.value, model_id=model.id,
        reason=request.reason, before=plan.before, after=plan.after, idempotency_key=key,
        incident_id=plan.incident_id, detail=detail,
    )
    # The event id is only known once the event row exists; the event carries the
    # result without it, the HTTP response carries it.
    provisional = result_of(plan, False, at, audit_id=audit_id)
    event_id = append_event(conn, EventType.ACTION, at, model.id, ActionEventData(result=provisional, audit=audit))
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
                entry = incidents.add_entry(conn, result.incident_id, at, "page_failed", result.model_id, None,
                                            f"page to {page.team} via {backend.paging.name} failed: {error}")
                incidents.announce(conn, result.incident_id, entry, at)
