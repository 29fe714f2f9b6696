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
from fleetdesk.wire import Attention, Health, IncidentGroup, ModelRow, Role, Tier


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
    def of(cls, row: ModelRow) -> FleetRow:
        """The wire's row, its repeated words shared."""
        return cls(
            id=row.id,
            type=intern(row.type),
            app=intern(row.app),
            surface=intern(row.surface),
            stage=row.stage,
            tier=row.tier,
            role=row.role,
            owner_team=intern(row.owner_team),
            health=row.health,
            attention=row.attention,
            budget_remaining=row.budget_remaining,
            calibration=row.calibration,
            normalized_entropy=row.normalized_entropy,
            open_incident_id=row.open_incident_id,
            group_label=None if row.group_label is None else intern(row.group_label),
            group_started=row.group_started,
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
