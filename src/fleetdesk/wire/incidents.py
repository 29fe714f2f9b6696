"""Incidents: their state, timeline and notes."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from fleetdesk.domain.bounds import Moment
from fleetdesk.domain.slo import Severity
from fleetdesk.wire.base import WireModel


class IncidentState(StrEnum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class Incident(WireModel):
    id: int
    model_id: str = Field(description="The model the incident opened on")
    model_ids: list[str] = Field(description="Every model that joined the incident, first one first")
    state: IncidentState
    severity: Severity
    title: str
    opened_at: Moment
    updated_at: Moment
    acknowledged_at: Moment | None = None
    acknowledged_by: str | None = None
    resolved_at: Moment | None = None


class TimelineEntry(WireModel):
    id: int
    incident_id: int
    at: Moment
    kind: str = Field(description="opened, joined, unstable, alert, action, ack, note, resolved")
    model_id: str
    actor: str | None = Field(description="None for the server itself")
    text: str
    audit_id: int | None = None


class Note(WireModel):
    id: int
    model_id: str
    incident_id: int | None
    author: str
    at: Moment
    text: str


class IncidentDetail(Incident):
    timeline: list[TimelineEntry] = Field(description="Oldest first")
    notes: list[Note]


class IncidentPage(WireModel):
    items: list[Incident]
    total: int
    offset: int
    limit: int
