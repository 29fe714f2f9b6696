"""Fleet-wide settings copied from the fleet file at seed time, kept in the store's ``meta`` table."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict

from fleetdesk.domain.bands import bands_for
from fleetdesk.domain.fleet import FleetFile, PipelineRotation
from fleetdesk.domain.model_type import Vocabulary
from fleetdesk.domain.policy import MonitoringPolicy
from fleetdesk.domain.registry import Model, Role
from fleetdesk.domain.slo import SloPolicy
from fleetdesk.domain.stability import HealthBands
from fleetdesk.domain.type_record import ModelTypeRecord


class FleetConfig(BaseModel):
    """Fleet-wide settings copied from the fleet file at seed time."""

    model_config = ConfigDict(frozen=True)

    name: str
    vocabulary: Vocabulary
    default_bands: HealthBands
    bands: dict[str, HealthBands]
    role_bands: dict[Role, dict[str, HealthBands]] = {}
    """Per role, then type (or "*"); databases seeded before role bands have none."""
    pipelines: dict[str, PipelineRotation] = {}
    """Per app: the data-pipeline rotation a shared-cause incident pages."""
    slo: SloPolicy
    bucket: timedelta
    policy: MonitoringPolicy = MonitoringPolicy()
    """Per tier: objective, which rules page or ticket, sparse slices; databases seeded before have the defaults."""
    types: dict[str, ModelTypeRecord] = {}
    """Per type string: its record; databases seeded before type records have none."""

    @classmethod
    def of(cls, file: FleetFile) -> FleetConfig:
        """What seeding keeps of a fleet file."""
        by_type, by_role = file.effective_bands
        return cls(
            name=file.name,
            vocabulary=file.vocabulary,
            default_bands=file.default_bands,
            bands=by_type,
            role_bands=by_role,
            pipelines=file.pipelines,
            slo=file.slo,
            bucket=file.history.bucket,
            policy=file.policy,
            types=file.types,
        )

    def bands_for(self, model: Model) -> HealthBands:
        """The band this model is judged against: its type's, or its role's (see domain.bands), with its
        tier's minimum events per slice."""
        return self.policy.bands_for(
            model,
            bands_for(self.default_bands, self.bands, self.role_bands, model.type, model.role),
        )

    def tasks_for(self, model: Model) -> tuple[str, ...]:
        """The tasks its type declares (each judged on its own); empty for a single-task model."""
        record = self.types.get(model.type)
        return () if record is None else record.tasks

    def task_weights_for(self, model: Model) -> dict[str, float] | None:
        """Its type's declared task weights; None: the model is judged by its worst task."""
        record = self.types.get(model.type)
        return None if record is None else record.task_weights

    @property
    def bucket_seconds(self) -> int:
        return int(self.bucket.total_seconds())
