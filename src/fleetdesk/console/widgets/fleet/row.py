"""The fleet table's rows: the wire's ``ModelRow``, with its repeated words shared.

The fleet view holds every model of the fleet (50,000 and more) for as long as the console runs; a row whose
repeated words (type, app, surface, team) are shared strings takes a fraction of a ModelSummary's memory
(about 0.5 KB against 5 KB).
"""

from __future__ import annotations

from datetime import datetime
from sys import intern
from typing import TypedDict

from fleetdesk.wire import IncidentGroup, ModelRow


def shared(row: ModelRow) -> ModelRow:
    """The row as the table keeps it: its repeated words one string each across the fleet."""
    return ModelRow(
        row.id,
        intern(row.type),
        intern(row.app),
        intern(row.surface),
        row.stage,
        row.tier,
        row.role,
        intern(row.owner_team),
        row.health,
        row.attention,
        row.budget_remaining,
        row.calibration,
        row.normalized_entropy,
        row.open_incident_id,
        None if row.group_label is None else intern(row.group_label),
        row.group_started,
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
