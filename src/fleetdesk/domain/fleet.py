"""The fleet file: registry, vocabulary, health bands, SLO policy and metric history.

Metric history is stored as a seeded recipe per model (a steady profile plus
dated incidents) and materialised deterministically by ``synthetic``: 28 days
of hourly buckets for 1,000+ models would be tens of megabytes as raw rows,
while the recipe is a few kilobytes and reproduces the same buckets every time.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fleetdesk.domain.bands import ANY_TYPE, bands_for, role_band_problems
from fleetdesk.domain.bounds import FINITE, LONGEST, MomentText, Span
from fleetdesk.domain.model_type import ModelTypeError, Vocabulary
from fleetdesk.domain.policy import MonitoringPolicy
from fleetdesk.domain.registry import Model, Role
from fleetdesk.domain.slo import SloPolicy
from fleetdesk.domain.stability import HealthBands
from fleetdesk.domain.type_record import ANY_ROLE, ModelTypeRecord

FLEET_SCHEMA_VERSION: Literal[1] = 1

# A recipe's numbers multiply into every bucket it draws (events x traffic shift x noise, NE x regression x
# noise, ...), so each is bounded to where the product stays inside what one bucket may carry
# (fleetdesk.domain.bounds.MAX_BUCKET_SUM, MAX_SIGNAL) and a drill can ingest it.
MAX_EVENTS_PER_BUCKET = 1e9
MAX_RATIO = 100.0
"""Largest typical calibration or NE of a profile."""
MAX_MAGNITUDE = 1e3
"""Largest incident magnitude, and the smallest is its inverse (see synthetic.MAX_EFFECT for overlaps)."""
MAX_NOISE = 0.5
"""Relative noise above ~0.5 would flip the sign of a sum."""
MIN_BUCKET = timedelta(seconds=1)  # integration tests replay Prometheus scrapes with 4 s buckets
MAX_HISTORY_BUCKETS = 20_000
"""Buckets per model a history may hold (28 days hourly is 672; the whole history is generated in memory)."""


class MetricProfile(BaseModel):
    """A model's steady behaviour, from which noisy buckets are drawn."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)

    events_per_bucket: float = Field(ge=1.0, le=MAX_EVENTS_PER_BUCKET)
    base_rate: float = Field(ge=1e-6, le=1.0 - 1e-6, description="Share of positive labels")
    calibration: float = Field(
        ge=1.0 / MAX_RATIO, le=MAX_RATIO, description="Typical Σ predictions / Σ labels"
    )
    normalized_entropy: float = Field(ge=1.0 / MAX_RATIO, le=MAX_RATIO, description="Typical NE")
    noise: float = Field(
        default=0.01, ge=0.0, le=MAX_NOISE, description="Relative bucket-to-bucket noise"
    )
    seed: int = 0


class IncidentKind(StrEnum):
    CALIBRATION_DRIFT = "calibration_drift"  # calibration moves by magnitude (ratio) over the span
    NE_REGRESSION = "ne_regression"  # NE multiplied by magnitude
    FEED_STOP = "feed_stop"  # no events: buckets missing
    TRAFFIC_SHIFT = "traffic_shift"  # event volume multiplied by magnitude


class MetricIncident(BaseModel):
    """A deliberate disturbance of one model's metrics over a time span."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE)

    model_id: str
    kind: IncidentKind
    start: MomentText
    end: MomentText | None = Field(default=None, description="None: still going")
    magnitude: float = Field(default=1.0, ge=1.0 / MAX_MAGNITUDE, le=MAX_MAGNITUDE)
    story: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> MetricIncident:
        if self.end is not None and self.end <= self.start:
            raise ValueError("end must be after start")
        return self


class MetricHistory(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    start: MomentText
    end: MomentText
    bucket: Span = timedelta(hours=1)
    profiles: dict[str, MetricProfile]
    incidents: list[MetricIncident] = []

    @model_validator(mode="after")
    def _ordered(self) -> MetricHistory:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if self.bucket < MIN_BUCKET:
            raise ValueError(f"bucket must be at least {MIN_BUCKET}")
        if (
            self.end - self.start > LONGEST
            or (self.end - self.start) / self.bucket > MAX_HISTORY_BUCKETS
        ):
            raise ValueError(
                f"history must span at most {LONGEST.days} days and {MAX_HISTORY_BUCKETS:,} buckets"
            )
        return self


class PipelineRotation(BaseModel):
    """The on-call rotation of an app's data pipelines: paged when every model of one surface shifts at once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    team: str = Field(min_length=1)
    rotation: str = Field(min_length=1)


def with_default_tiers(data: Any) -> Any:
    """A fleet file's raw ``models`` where a model without a tier takes its type record's default tier (a
    fleet file and a ``registry apply`` file read the same way)."""
    if not isinstance(data, dict):
        return data
    types, models = data.get("types"), data.get("models")
    if not isinstance(types, dict) or not isinstance(models, list):
        return data
    filled = []
    for model in models:
        record = types.get(model.get("type")) if isinstance(model, dict) else None
        if isinstance(record, dict) and "tier" not in model and "default_tier" in record:
            model = {**model, "tier": record["default_tier"]}
        filled.append(model)
    return {**data, "models": filled}


class FleetFile(BaseModel):
    """One fixture fleet, as stored in fixtures/fleets/NAME.json."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = FLEET_SCHEMA_VERSION
    name: str
    description: str = ""
    vocabulary: Vocabulary
    default_bands: HealthBands
    bands: dict[str, HealthBands] = Field(default_factory=dict, description="Per model type string")
    role_bands: dict[Role, dict[str, HealthBands]] = Field(
        default_factory=dict,
        description='Per role, then per model type string or "*" (every type); wins over the per-type bands',
    )
    pipelines: dict[str, PipelineRotation] = Field(
        default_factory=dict,
        description="Per app: the data-pipeline rotation a shared-cause incident on one of its surfaces pages",
    )
    types: dict[str, ModelTypeRecord] = Field(
        default_factory=dict,
        description="Per model type string: its record (owner, description, default tier, bands per role,"
        " runbook, declared extension attributes)",
    )
    slo: SloPolicy = SloPolicy()
    policy: MonitoringPolicy = Field(
        default_factory=MonitoringPolicy,
        description="Per tier: objective, which burn-rate rules page or ticket, working hours, sparse slices",
    )
    models: list[Model]
    history: MetricHistory

    @model_validator(mode="before")
    @classmethod
    def _default_tiers(cls, data: Any) -> Any:
        return with_default_tiers(data)

    @model_validator(mode="after")
    def _bands_and_pipelines(self) -> FleetFile:
        by_type, by_role = self.effective_bands
        problems = role_band_problems(
            self.default_bands,
            by_type,
            by_role,
            (m.type for m in self.models if m.role is Role.HOLDOUT),
        )
        for type_string, record in self.types.items():
            for role in record.bands:
                elsewhere = (
                    f"bands.{type_string}"
                    if role == ANY_ROLE and type_string in self.bands
                    else f"role_bands.{role}.{type_string}"
                    if role != ANY_ROLE and type_string in self.role_bands.get(Role(role), {})
                    else None
                )
                if elsewhere:
                    problems.append(
                        f"types.{type_string}.bands.{role}: also set in {elsewhere}; set it in one place"
                    )
        for role, bands in self.role_bands.items():
            for type_string in bands:
                if type_string == ANY_TYPE:
                    continue
                try:
                    self.vocabulary.parse(type_string)
                except ModelTypeError as error:
                    problems.append(
                        f"role_bands.{role}.{type_string}: not a model type ({error.message})"
                    )
        problems += self.policy.problems(self.slo)
        named = [("default_bands", self.default_bands)]
        named += [(f"bands.{t}", b) for t, b in self.bands.items()]
        named += [
            (f"role_bands.{r}.{t}", b) for r, bs in self.role_bands.items() for t, b in bs.items()
        ]
        problems += [
            f"{where}.min_events: set per tier, in policy.tiers.<tier>.min_events_per_slice"
            for where, band in named
            if band.min_events
        ]
        problems += [
            f"pipelines.{app}: unknown app (not in vocabulary.apps)"
            for app in self.pipelines
            if app not in self.vocabulary.apps
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @cached_property
    def effective_bands(self) -> tuple[dict[str, HealthBands], dict[Role, dict[str, HealthBands]]]:
        """Per-type and per-role bands with the type records' bands folded in (a record's "*" band is its
        type's band, a record's role band is that role's band for the type)."""
        by_type = dict(self.bands)
        by_role = {role: dict(bands) for role, bands in self.role_bands.items()}
        for type_string, record in self.types.items():
            for role, band in record.bands.items():
                if role == ANY_ROLE:
                    by_type.setdefault(type_string, band)
                else:
                    by_role.setdefault(Role(role), {}).setdefault(type_string, band)
        return by_type, by_role

    def bands_for(self, type_string: str, role: Role | None = None) -> HealthBands:
        """The band a model of this type (and role) is judged against."""
        by_type, by_role = self.effective_bands
        if role is None:
            return by_type.get(type_string, self.default_bands)
        return bands_for(self.default_bands, by_type, by_role, type_string, role)
