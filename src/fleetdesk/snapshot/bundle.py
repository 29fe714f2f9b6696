"""The snapshot file format: one versioned pydantic document per handoff.

A snapshot freezes what the exporting engineer saw: the server it came from
(URL without credentials), the focused model's registry context and SLO state,
the stability series on screen, the incident timeline and notes, the audit
records of actions taken, the fleet table, the models one key away (so their
screens open when reopened), and the console screen as SVG. The bodies are
the API's own wire models (fleetdesk.wire), so a snapshot reads like the
server's answers at export time. Secrets are masked before it is written
(redact.py); ``redactions`` counts what was masked.

Versions: ``SCHEMA_VERSION`` is what this code writes. Every older version
keeps a frozen model here and a step in ``MIGRATIONS`` that lifts it one
version; reopen.py applies the steps in order.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.bounds import Moment
from fleetdesk.wire import (
    AuditRecord,
    FleetSummary,
    IncidentDetail,
    Lineage,
    ModelDetail,
    ModelSummary,
    ServerInfo,
    StabilitySeries,
    Window,
)

SCHEMA_VERSION: Literal[2] = 2


class Screen(StrEnum):
    """The console screen that was showing at export."""

    FLEET = "fleet"
    MODEL = "model"
    INCIDENT = "incident"


class ServerRef(BaseModel):
    """Where the data came from; ``url`` never carries credentials, query or fragment."""

    model_config = ConfigDict(frozen=True)

    url: str
    info: ServerInfo


class View(BaseModel):
    """What the exporting console showed, so reopening lands on the same screen."""

    model_config = ConfigDict(frozen=True)

    screen: Screen = Screen.MODEL
    window: Window = Window.H24


class RelatedModel(BaseModel):
    """A model one key away from the handed-over one (baseline, holdout, upstream, others in the incident)."""

    model_config = ConfigDict(frozen=True)

    model: ModelDetail
    lineage: Lineage
    stability: list[StabilitySeries] = Field(description="The shown window only")
    incident: IncidentDetail | None = Field(
        default=None, description="Its open incident, when not the handed-over one"
    )


class Snapshot(BaseModel):
    """A triage handoff snapshot, schema version 2 (the current one)."""

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[2] = SCHEMA_VERSION
    exported_by: str = Field(description="The user the exporting token belongs to")
    exported_at: Moment = Field(description="Server clock at export (UTC)")
    fleetdesk_version: str
    server: ServerRef
    model_id: str = Field(description="The model the handoff is about")
    model: ModelDetail = Field(description="Registry context, live state and SLO status")
    lineage: Lineage
    stability: list[StabilitySeries] = Field(description="The series shown, one per window")
    incident: IncidentDetail | None = Field(
        description="The incident handed over, with timeline and notes"
    )
    audit: list[AuditRecord] = Field(
        description="Actions taken on the model (and in the incident), newest first"
    )
    fleet: FleetSummary
    models: list[ModelSummary] = Field(description="The fleet table at export, worst first")
    view: View = View()
    screen_svg: str | None = Field(
        default=None,
        description="The console screen at export; None from the CLI without a console",
    )
    redactions: dict[str, int] = Field(
        default_factory=dict, description="How many secrets were masked, by rule name"
    )
    related: list[RelatedModel] = Field(
        default_factory=list, description="Models one key away, so their screens open"
    )

    def series(self, window: Window) -> StabilitySeries | None:
        """The stability series for ``window``, when it was captured."""
        return next((item for item in self.stability if item.window == window), None)


class SnapshotV1(BaseModel):
    """Schema version 1 (fleetdesk 0.1 pre-release): one series, no fleet table, no view, no redaction counts."""

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[1]
    exported_by: str
    exported_at: Moment
    fleetdesk_version: str
    server: ServerRef
    model_id: str
    model: ModelDetail
    lineage: Lineage
    stability: StabilitySeries
    incident: IncidentDetail | None
    audit: list[AuditRecord]
    fleet: FleetSummary
    screen_svg: str | None = None


def _v1_to_v2(document: dict[str, Any]) -> dict[str, Any]:
    old = SnapshotV1.model_validate(document)
    lifted = old.model_dump(mode="json")
    lifted["schema_version"] = 2
    lifted["stability"] = [lifted["stability"]]
    # v1 kept no fleet table; the worst-first rows of the summary are the best stand-in.
    lifted["models"] = lifted["fleet"]["worst"]
    lifted["view"] = {"screen": Screen.MODEL.value, "window": old.stability.window.value}
    lifted["redactions"] = {}
    return lifted


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}
"""version -> a step that turns a valid document of that version into one of the next version."""
