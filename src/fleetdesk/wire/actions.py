"""Playbook actions on the wire: the request, what it changed or would change, and its audit record."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from fleetdesk.domain.bounds import FINITE, Moment
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import ActionKind, EscalationTarget
from fleetdesk.wire.base import LAZY, WireModel
from fleetdesk.wire.server import AccessRole


class ActionRequest(WireModel):
    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE, **LAZY)

    reason: str = Field(default="", max_length=2000)
    dry_run: bool = False
    expected_serving_model_id: str | None = Field(
        default=None, description="Required for rollback, end-experiment, halt-launch: the serving model the caller saw"
    )
    target: EscalationTarget = EscalationTarget.OWNER
    text: str | None = Field(default=None, max_length=10000, description="Note text (note only)")


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
    changes: list[StateChange] = Field(description="Every model whose live state changes, before and after")
    traffic_moved: float = Field(description="Traffic share moved off the model")
    traffic_to: str | None
    pages: list[Page]
    incident_id: int | None
    audit_id: int | None = Field(description="None for a dry run")
    event_id: int | None = Field(description="None for a dry run")


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
    detail: dict[str, Any] = Field(default_factory=dict, description="Action specifics, e.g. pages sent, note text")


class AuditPage(WireModel):
    items: list[AuditRecord] = Field(description="Newest first")
    total: int
    offset: int
    limit: int
