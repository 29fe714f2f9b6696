"""Metric ingestion: batches of closed buckets."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from fleetdesk.domain.bounds import FINITE, IdText, MomentText
from fleetdesk.domain.stability import StabilityBucket
from fleetdesk.domain.tasks import TaskName
from fleetdesk.wire.base import LAZY, WireModel


class IngestBucket(StabilityBucket):
    """One closed bucket of one model; start must be aligned to the bucket length."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE, **LAZY)

    model_id: IdText
    start: MomentText
    task: TaskName | None = Field(
        default=None,
        description="The task of a multi-task model these sums are of (one of its type's tasks; a bucket of"
        " such a model comes with every task at once); none for a model judged as one series",
    )


class IngestRequest(WireModel):
    buckets: list[IngestBucket] = Field(min_length=1, max_length=50_000)


class IngestResult(WireModel):
    accepted: int = Field(description="New buckets stored")
    unchanged: int = Field(description="Buckets already stored with the same sums (no-op)")
    unstable: list[str] = Field(description="Models whose newly closed bucket is unstable")
    incident_ids: list[int] = Field(description="Incidents opened or joined because of this batch")
