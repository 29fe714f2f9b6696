"""Playbook actions on the wire: the request, what it changed or would change, and its audit record."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from fleetdesk.domain.bounds import FINITE, IdText, Moment
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import ActionKind, Confirmation, EscalationTarget, TargetHealth
from fleetdesk.wire.base import LAZY, WireModel
from fleetdesk.wire.server import AccessRole


class ActionRequest(WireModel):
    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE, **LAZY)

    reason: str = Field(default="", max_length=2000)
    dry_run: bool = False
    expected_serving_model_id: IdText | None = Field(
        default=None,
        description="Required for rollback, end-experiment, halt-launch, resume-launch: the serving model the"
        " caller saw",
    )
    target: EscalationTarget = EscalationTarget.OWNER
    text: str | None = Field(default=None, max_length=10000, description="Note text (note only)")
    acknowledged_target: IdText | None = Field(
        default=None,
        description="rollback, end-experiment: the id of an unhealthy baseline you move traffic to anyway"
        " (required when the option names acknowledge_target; 409 target-unhealthy otherwise)",
    )
    holdout_override: bool = Field(
        default=False,
        description="rollback, end-experiment on a holdout: end its measurement anyway (with a"
        " reason; 422 holdout-override-required otherwise)",
    )


class StateChange(WireModel):
    model_id: str
    before: LiveState
    after: LiveState


class Page(WireModel):
    """One page sent to a team's on-call rotation."""

    model_id: str = Field(description="The model the page is about")
    team: str
    rotation: str
    target: EscalationTarget
    reason: str
    incident_id: int | None
    delivered_via: str = Field(description="Name of the paging target that took it")


class ActionResult(WireModel):
    action: ActionKind
    model_id: str
    dry_run: bool
    at: Moment
    summary: str = Field(description="What happened (or would), in plain words")
    changes: list[StateChange] = Field(
        description="Every model whose live state changes, before and after"
    )
    traffic_moved: float = Field(description="Traffic share moved off the model")
    traffic_to: str | None
    pages: list[Page]
    incident_id: int | None
    audit_id: int | None = Field(description="None for a dry run")
    event_id: int | None = Field(description="None for a dry run")
    warnings: list[str] = Field(
        default_factory=list, description="What to weigh before confirming, worst first"
    )
    target_health: TargetHealth | None = Field(
        default=None,
        description="rollback, end-experiment: the health of the baseline the traffic moves to",
    )
    confirmation: Confirmation | None = Field(
        default=None, description="Dry runs: how the action must be confirmed"
    )
    acknowledge_target: str | None = Field(
        default=None, description="Dry runs: the id acknowledged_target must name"
    )
    override_required: bool = Field(
        default=False, description="Dry runs: holdout_override is needed"
    )


class AuditRecord(WireModel):
    id: int
    at: Moment
    actor: str
    role: AccessRole
    action: str = Field(description="An ActionKind value")
    model_id: str
    reason: str
    before: LiveState | None
    after: LiveState | None
    idempotency_key: str
    incident_id: int | None
    detail: dict[str, Any] = Field(
        default_factory=dict, description="Action specifics, e.g. pages sent, note text"
    )


class AuditPage(WireModel):
    items: list[AuditRecord] = Field(description="Newest first")
    total: int
    offset: int
    limit: int
