"""The live event stream: each event's type and the model of its data."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.bounds import Moment
from fleetdesk.domain.stability import Health
from fleetdesk.wire.actions import ActionResult, AuditRecord
from fleetdesk.wire.base import WireModel
from fleetdesk.wire.incidents import Incident, TimelineEntry
from fleetdesk.wire.registry import RegistryEventData


class EventType(StrEnum):
    """Kinds of live event; EVENT_DATA gives the model of each one's data."""

    BUCKET_CLOSED = "bucket.closed"
    SLO_CHANGED = "slo.changed"
    INCIDENT_OPENED = "incident.opened"
    INCIDENT_UPDATED = "incident.updated"  # joined, acknowledged, noted, resolved
    ACTION = "action"
    CLOCK = "clock"
    REGISTRY_CHANGED = "registry.changed"  # a model created, updated or retired


class BucketClosedData(WireModel):
    model_id: str
    start: Moment
    health: Health
    calibration: float | None
    normalized_entropy: float | None


class SloChangedData(WireModel):
    model_id: str
    health: Health
    attention: Attention
    budget_remaining: float | None
    alerts: list[str]


class IncidentEventData(WireModel):
    incident: Incident
    entry: TimelineEntry | None = None


class ActionEventData(WireModel):
    result: ActionResult
    audit: AuditRecord


class ClockEventData(WireModel):
    now: Moment


EVENT_DATA: dict[EventType, type[BaseModel]] = {
    EventType.BUCKET_CLOSED: BucketClosedData,
    EventType.SLO_CHANGED: SloChangedData,
    EventType.INCIDENT_OPENED: IncidentEventData,
    EventType.INCIDENT_UPDATED: IncidentEventData,
    EventType.ACTION: ActionEventData,
    EventType.CLOCK: ClockEventData,
    EventType.REGISTRY_CHANGED: RegistryEventData,
}
"""The model of ``ServerEvent.data`` for each event type."""


class ServerEvent(WireModel):
    id: int
    type: EventType
    at: Moment
    model_id: str | None
    data: dict[str, Any] = Field(description="Validate with EVENT_DATA[type]")

    def payload(self) -> BaseModel:
        """The typed data of this event."""
        return EVENT_DATA[self.type].model_validate(self.data)


class EventPage(WireModel):
    items: list[ServerEvent] = Field(description="Oldest first, ids ascending")
    last_id: int = Field(description="Pass as ?after= next time (0 when the log is empty)")
