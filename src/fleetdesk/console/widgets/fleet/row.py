"""One row of the fleet table: what the fleet view shows and filters on of a model, and nothing more.

The fleet view holds every model of the fleet (10,000 and more) for as long as the console runs; a
slotted row whose repeated words (type, app, surface, team) are shared strings takes a fraction of a
ModelSummary's memory (about 0.5 KB against 5 KB).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from sys import intern
from typing import TypedDict

from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.wire import Attention, Health, IncidentGroup, ModelSummary, Role, Tier


@dataclass(frozen=True, slots=True)
class FleetRow:
    id: str
    type: str
    app: str
    surface: str
    stage: FunnelStage
    tier: Tier
    role: Role
    owner_team: str
    health: Health
    attention: Attention
    budget_remaining: float | None
    calibration: float | None
    normalized_entropy: float | None
    open_incident_id: int | None
    group_label: str | None = None
    """Its open incident is a shared-cause group on this surface ('Instagram · Feed')."""
    group_started: datetime | None = None

    @classmethod
    def of(cls, model: ModelSummary) -> FleetRow:
        group = model.incident_group
        return cls(
            id=model.id,
            type=intern(model.type),
            app=intern(model.app),
            surface=intern(model.surface),
            stage=model.stage,
            tier=model.tier,
            role=model.role,
            owner_team=intern(model.owner_team),
            health=model.health,
            attention=model.attention,
            budget_remaining=model.budget_remaining,
            calibration=model.calibration,
            normalized_entropy=model.normalized_entropy,
            open_incident_id=model.open_incident_id,
            **grouped(group),
        )


class Grouping(TypedDict):
    """A row's shared-cause fields, as keyword arguments."""

    group_label: str | None
    group_started: datetime | None


def grouped(group: IncidentGroup | None) -> Grouping:
    """The row fields of a shared-cause group (none: not in one)."""
    if group is None:
        return {"group_label": None, "group_started": None}
    return {"group_label": intern(group.label), "group_started": group.started_at}
