"""Incidents: their state, timeline and notes."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.bounds import Moment
from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.registry import Role, Tier
from fleetdesk.domain.slo import Severity
from fleetdesk.domain.stability import Health
from fleetdesk.wire.base import WireModel


class IncidentState(StrEnum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class IncidentCause(StrEnum):
    """Where the incident's trouble likely comes from."""

    OWN = "own"  # one model's own trouble
    UPSTREAM = "upstream"  # downstream models joined their upstream model's incident
    SHARED = (
        "shared"  # models of one app and surface turned unstable together: shared cause suspected
    )


class IncidentGroup(WireModel):
    """A shared-cause incident: models of one app and surface (any funnel stage) whose trouble began in the
    same or the next bucket, with a healthy upstream."""

    app: str
    surface: str
    label: str = Field(description="e.g. 'Instagram · Feed'")
    started_at: Moment = Field(
        description="When the first member's trouble began (its first bad bucket)"
    )
    note: str = "shared cause suspected"


class Incident(WireModel):
    id: int
    model_id: str = Field(description="The model the incident opened on")
    model_ids: list[str] = Field(
        description="Every model that joined the incident, first one first"
    )
    state: IncidentState
    severity: Severity
    title: str
    opened_at: Moment
    updated_at: Moment
    acknowledged_at: Moment | None = None
    acknowledged_by: str | None = None
    resolved_at: Moment | None = None
    cause: IncidentCause = IncidentCause.OWN
    group: IncidentGroup | None = Field(default=None, description="Set when cause is shared")


class TimelineEntry(WireModel):
    id: int
    incident_id: int
    at: Moment
    kind: str = Field(description="opened, joined, unstable, alert, action, ack, note, resolved")
    model_id: str
    actor: str | None = Field(description="None for the server itself")
    text: str
    audit_id: int | None = None
    repeats: int = Field(
        default=1,
        ge=1,
        description="Identical server entries this one stands for (the incident"
        " detail collapses repeats; the first one's id and time)",
    )
    last_at: Moment | None = Field(
        default=None, description="The last repeat's time, when repeats > 1"
    )


class IncidentMember(WireModel):
    """One model of an incident, as it stands now."""

    model_id: str
    tier: Tier
    role: Role
    stage: FunnelStage
    owner_team: str
    health: Health
    attention: Attention
    joined_at: Moment | None = Field(
        default=None, description="When it opened or joined the incident"
    )
    open: bool = Field(
        description="Still points at this incident (False: it recovered, or moved on)"
    )


class Note(WireModel):
    id: int
    model_id: str
    incident_id: int | None
    author: str
    at: Moment
    text: str


class IncidentDetail(Incident):
    timeline: list[TimelineEntry] = Field(
        description="Oldest first; a server entry repeated with nothing a person"
        " did in between is one entry with repeats and last_at"
    )
    notes: list[Note]
    members: list[IncidentMember] = Field(
        default_factory=list, description="Every model of the incident, in model_ids order"
    )


class IncidentPage(WireModel):
    items: list[Incident]
    total: int
    offset: int
    limit: int
