"""Errors on the wire: RFC 9457 problem details and the ``type`` of each problem."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from fleetdesk.domain.bounds import FINITE, Moment
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import TargetHealth
from fleetdesk.wire.base import LAZY, WireModel
from fleetdesk.wire.incidents import Incident


class ProblemType(StrEnum):
    """The ``type`` URI of every problem the server returns."""

    BAD_REQUEST = "urn:fleetdesk:problem:bad-request"  # 400
    IDEMPOTENCY_KEY_MISSING = "urn:fleetdesk:problem:idempotency-key-missing"  # 400
    UNAUTHENTICATED = "urn:fleetdesk:problem:unauthenticated"  # 401
    FORBIDDEN = "urn:fleetdesk:problem:forbidden"  # 403, missing_permission set
    NOT_FOUND = "urn:fleetdesk:problem:not-found"  # 404 (suggestions may be set)
    METHOD_NOT_ALLOWED = "urn:fleetdesk:problem:method-not-allowed"  # 405
    REQUEST_TIMEOUT = "urn:fleetdesk:problem:request-timeout"  # 408 the body did not arrive in time
    PAYLOAD_TOO_LARGE = (
        "urn:fleetdesk:problem:payload-too-large"  # 413 the body is over the route's limit
    )
    STALE_STATE = "urn:fleetdesk:problem:stale-state"  # 409, current set
    IDEMPOTENCY_KEY_IN_PROGRESS = "urn:fleetdesk:problem:idempotency-key-in-progress"  # 409
    ALREADY_ACKNOWLEDGED = "urn:fleetdesk:problem:already-acknowledged"  # 409, incident set
    BUCKET_CONFLICT = "urn:fleetdesk:problem:bucket-conflict"  # 409, conflicts set
    MODEL_EXISTS = "urn:fleetdesk:problem:model-exists"  # 409 create of a registered id
    CLOCK = "urn:fleetdesk:problem:clock"  # 409 clock not frozen / backwards
    VALIDATION = "urn:fleetdesk:problem:validation"  # 422, errors set
    REGISTRY_INVALID = (
        "urn:fleetdesk:problem:registry-invalid"  # 422 registry change refused, errors set
    )
    ACTION_NOT_ALLOWED = "urn:fleetdesk:problem:action-not-allowed"  # 422 registry rule
    TARGET_UNHEALTHY = "urn:fleetdesk:problem:target-unhealthy"  # 409 baseline unhealthy, not acknowledged; target_health set
    HOLDOUT_OVERRIDE_REQUIRED = (
        "urn:fleetdesk:problem:holdout-override-required"  # 422 ends a holdout, no override
    )
    IDEMPOTENCY_KEY_REUSED = "urn:fleetdesk:problem:idempotency-key-reused"  # 422
    UNAVAILABLE = "urn:fleetdesk:problem:unavailable"  # 503
    STORAGE_FULL = (
        "urn:fleetdesk:problem:storage-full"  # 507 the server's disk is full: nothing was changed
    )
    METRICS_SOURCE = (
        "urn:fleetdesk:problem:metrics-source"  # 502 the metrics source (Prometheus) failed a query
    )
    INTERNAL = "urn:fleetdesk:problem:internal"  # 500, never a stack trace


class FieldError(WireModel):
    """One invalid input, located as in pydantic (e.g. ["body", "reason"])."""

    loc: list[str | int]
    message: str


class BucketConflict(WireModel):
    model_id: str
    start: Moment
    task: str | None = None


class ProblemDetails(BaseModel):
    """RFC 9457 problem details, plus fleetdesk's extension members."""

    model_config = ConfigDict(extra="allow", **FINITE, **LAZY)

    type: str = "about:blank"
    title: str
    status: int
    detail: str = ""
    instance: str | None = None
    # Extensions; only the ones that apply are present.
    missing_permission: str | None = Field(
        default=None, description="403: the permission the caller lacks"
    )
    current: LiveState | None = Field(
        default=None, description="409 stale state: the model's state now"
    )
    incident: Incident | None = Field(
        default=None, description="409 already acknowledged: the incident now"
    )
    errors: list[FieldError] | None = Field(
        default=None, description="422 validation: each bad input"
    )
    conflicts: list[BucketConflict] | None = Field(default=None, description="409 bucket conflict")
    suggestions: list[str] | None = Field(default=None, description="404 unknown model: close ids")
    suggested_action: str | None = Field(
        default=None, description="422 rule: what to do instead, e.g. escalate"
    )
    target_health: TargetHealth | None = Field(
        default=None, description="409 target unhealthy: the target's health"
    )
