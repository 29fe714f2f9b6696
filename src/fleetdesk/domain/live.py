"""A model's live state: what serves its traffic now, and where its launch stands."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.bounds import FINITE
from fleetdesk.domain.registry import LaunchPhase


class LiveState(BaseModel):
    """What a model is doing right now (changed by actions)."""

    model_config = ConfigDict(frozen=True, defer_build=True, **FINITE)

    serving_model_id: str = Field(
        description="Model that serves this model's traffic (itself, or its baseline after rollback/end)"
    )
    traffic_share: float = Field(ge=0.0, le=1.0)
    launch_phase: LaunchPhase
    launch_halted: bool = False
    experiment_ended: bool = False
