"""Models: fleet rows, the model detail, lineage, stability series and the fleet summary."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import NamedTuple

from pydantic import Field, computed_field, model_validator

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.bounds import Moment, Span
from fleetdesk.domain.comparison import SignalGap
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.playbook import ActionOption, TargetHealth
from fleetdesk.domain.policy import PagingVerdict
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.slo import SloStatus
from fleetdesk.domain.stability import Health, HealthBands, StabilityBucket
from fleetdesk.domain.type_record import ModelTypeRecord
from fleetdesk.wire.base import LAZY, WireModel
from fleetdesk.wire.incidents import IncidentGroup


class ModelSort(StrEnum):
    WORST = "worst"  # attention, then tier (TIER0 first), then budget left (least first), then id
    ID = "id"
    TIER = "tier"
    BUDGET = "budget"  # least error budget left first


class DecodedType(WireModel):
    """A model type string read out in words."""

    type: str
    app: str
    surface: str
    position: str
    architecture: str
    app_label: str
    surface_label: str
    position_label: str
    architecture_label: str
    stage: FunnelStage
    description: str = Field(
        description="e.g. 'Instagram · Stories · tray (sourcing) · multi-task multi-label'"
    )


class ModelSummary(WireModel):
    """One model of the listing of models (``GET /v1/models``); the fleet table loads ``ModelRow`` instead."""

    id: str
    type: str
    app: str
    surface: str
    stage: FunnelStage
    tier: Tier
    role: Role
    owner_team: str
    oncall_rotation: str
    baseline_model_id: str | None
    health: Health = Field(
        description="Health of the latest closed bucket (no_data when it is missing)"
    )
    calibration: float | None = Field(
        default=None, description="Calibration of the latest closed bucket"
    )
    normalized_entropy: float | None = Field(
        default=None, description="NE of the latest closed bucket"
    )
    attention: Attention
    live: LiveState
    budget_remaining: float | None
    max_burn_rate: float | None
    alerts: list[str] = Field(description="Names of firing burn-rate rules")
    open_incident_id: int | None
    last_bucket_start: Moment | None
    purpose: str
    incident_group: IncidentGroup | None = Field(
        default=None,
        description="Its open incident is a shared-cause group: which surface, since when",
    )


class ModelPage(WireModel):
    items: list[ModelSummary]
    total: int
    offset: int
    limit: int


class ModelRow(NamedTuple):
    """One model as the fleet table shows it, sent as a JSON array: a quarter of a ModelSummary's bytes, and
    no object per row to build or parse, so a console loads 50,000 models in under 2 s (issue 19)."""

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
    group_started: Moment | None = None

    @classmethod
    def of(cls, model: ModelSummary) -> ModelRow:
        """A summary's row: what ``GET /v1/fleet/rows`` answers for the model ``GET /v1/models`` lists."""
        group = model.incident_group
        return cls(
            model.id,
            model.type,
            model.app,
            model.surface,
            model.stage,
            model.tier,
            model.role,
            model.owner_team,
            model.health,
            model.attention,
            model.budget_remaining,
            model.calibration,
            model.normalized_entropy,
            model.open_incident_id,
            None if group is None else group.label,
            None if group is None else group.started_at,
        )


class ModelRows(WireModel):
    """A page of the fleet table, worst first (the order of ``GET /v1/models?sort=worst``)."""

    rows: list[ModelRow]
    total: int
    offset: int
    limit: int


class TaskHealth(WireModel):
    """One task of a multi-task model in the model's latest closed bucket."""

    task: str
    health: Health
    calibration: float | None
    normalized_entropy: float | None


class ModelDetail(WireModel):
    model: Model = Field(description="The registry record as loaded")
    decoded: DecodedType
    live: LiveState
    health: Health
    attention: Attention
    bands: HealthBands
    slo: SloStatus
    paging: PagingVerdict | None = Field(
        default=None,
        description="Why it pages, opens a ticket or stays quiet: its tier's policy and the deciding alert",
    )
    type_record: ModelTypeRecord | None = Field(
        default=None, description="Its type's record (owner, description, runbook, attributes)"
    )
    open_incident_id: int | None
    last_bucket_start: Moment | None
    actions: list[ActionOption] = Field(
        default_factory=list,
        description="Every playbook action kind for this model now: available or why not, and its confirmation",
    )
    baseline_health: TargetHealth | None = Field(
        default=None, description="Its baseline's health now (the fallback)"
    )
    holdout_health: TargetHealth | None = Field(
        default=None, description="Its holdout's health now"
    )
    fallback: str = Field(
        default="",
        description="The fallback in words: 'safe fallback is its baseline X', or"
        " 'baseline X is itself paging since 18:00: escalate'",
    )
    tasks: list[TaskHealth] = Field(
        default_factory=list,
        description="A multi-task model's tasks in its type's order, each judged on its own in the latest"
        " closed bucket (the model's health is its worst task's); empty for a model judged as one series",
    )
    launch_since: Moment | None = Field(
        default=None,
        description="When the model entered its launch phase (the registry change that moved it there);"
        " None when it has been in it since the registry was seeded",
    )


class LineageEntry(WireModel):
    id: str
    type: str
    tier: Tier
    role: Role
    owner_team: str
    health: Health
    attention: Attention


class Lineage(WireModel):
    model_id: str
    upstream: list[LineageEntry] = Field(description="Upstream chain, nearest first")
    downstream: list[LineageEntry] = Field(
        description="Blast radius: every transitive downstream model, by tier then id"
    )
    blast_radius: dict[Tier, int] = Field(
        description="Downstream count per tier, every tier present"
    )


class Window(StrEnum):
    H1 = "1h"
    H6 = "6h"
    H24 = "24h"
    D7 = "7d"
    D28 = "28d"

    @property
    def duration(self) -> timedelta:
        amount, unit = int(self.value[:-1]), self.value[-1]
        return timedelta(hours=amount) if unit == "h" else timedelta(days=amount)


class StabilityPoint(StabilityBucket):
    """One bucket: its additive sums, its health, and the signals derived from the sums."""

    model_config = LAZY

    health: Health

    @computed_field(description="Σ predictions / Σ labels; None with no data")  # type: ignore[prop-decorator]
    @property
    def calibration(self) -> float | None:
        return super().calibration

    @computed_field(description="Normalized entropy; None with no data")  # type: ignore[prop-decorator]
    @property
    def normalized_entropy(self) -> float | None:
        return super().normalized_entropy


MAX_POINTS = 28 * 24 * 60
"""Most points one list of a series may hold, checked before they are parsed: 28 days of one-minute slices (the
exact bound, one per bucket of the window, is checked after)."""


class StabilitySeries(WireModel):
    model_id: str
    task: str | None = Field(
        default=None, description="The task charted; none: the model as a whole"
    )
    window: Window
    start: Moment
    end: Moment
    bucket: Span
    bands: HealthBands
    points: list[StabilityPoint] = Field(
        max_length=MAX_POINTS,
        description="Buckets present in [start, end), oldest first; gaps are missing buckets",
    )
    baseline_model_id: str | None
    baseline_points: list[StabilityPoint] = Field(
        max_length=MAX_POINTS,
        description="The baseline's buckets over the same window, for overlay",
    )
    holdout_model_id: str | None = None
    holdout_points: list[StabilityPoint] = Field(
        default_factory=list,
        max_length=MAX_POINTS,
        description="The holdout's buckets over the same window, for overlay (each judged"
        " against its own band); only when asked (?holdout=true)",
    )
    gaps: list[SignalGap] = Field(
        default_factory=list,
        max_length=2,
        description="The model against its baseline and holdout over the window",
    )

    @model_validator(mode="after")
    def _points_fit_the_window(self) -> StabilitySeries:
        # A series has at most one point per bucket of its window (a 28-day window: 672). More is not a series
        # but a hostile answer or an edited snapshot: 200,000 points in a 24-hour one took 570 MB to draw.
        if self.bucket <= timedelta(0):
            raise ValueError(f"bucket must be positive, not {self.bucket}")
        slots = (self.end - self.start) // self.bucket + 1
        for name in ("points", "baseline_points", "holdout_points"):
            if len(getattr(self, name)) > slots:
                raise ValueError(
                    f"{name}: {len(getattr(self, name))} points, more than the {slots} buckets of the window"
                )
        return self


class FleetSummary(WireModel):
    evaluated_at: Moment
    total_models: int
    counts: dict[Health, dict[Tier, int]] = Field(
        description="Models by health then tier, every key present"
    )
    attention: dict[Attention, int]
    open_incidents: int
    worst: list[ModelSummary] = Field(
        description="Models needing attention, worst first (see ModelSort.WORST); healthy ones excluded"
    )
