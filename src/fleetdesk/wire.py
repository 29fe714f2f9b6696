"""The HTTP wire contract of the fleetdesk backend: every request and response body.

Server, client and snapshot all import these models; the OpenAPI document at
``/v1/openapi.json`` is generated from them. Changes here are additive only.

Conventions
-----------
- JSON bodies; datetimes are ISO 8601 with a UTC offset; durations ISO 8601 (``PT1H``).
- Auth: ``Authorization: Bearer <token>`` on every ``/v1`` route except
  ``/v1/openapi.json``. A server in demo mode (loopback only) serves reads
  without a token and refuses every mutation.
- Every mutating request (POST/PUT) needs an ``Idempotency-Key`` header
  (1-200 printable ASCII chars). Missing: 400. Same key + same actor + same
  body while the first is still running: 409. Same key with a different body:
  422. Same key and body after it finished: the stored status and body are
  replayed (header ``Idempotent-Replayed: true``). Keys are scoped per user.
  Dry runs need a key too but never claim it; a request that fails (4xx) claims
  nothing either, so a retry after fixing it may reuse the key.
- Errors are always ``application/problem+json`` (RFC 9457), see ProblemDetails
  and ProblemType. A 500 never carries a stack trace.
- Every route may also answer 500 and 503 (database busy); every write 408 and
  413 (fleetdesk.server.limits: body time and size) and 507 (the disk is full:
  nothing changed). The OpenAPI document lists each route's statuses.

Routes (all JSON unless noted; P = ProblemDetails)
------------------------------------------------------------------------------
GET  /healthz                         -> Health check {"status": "ok"}
GET  /readyz                          -> {"status": "ready"} | 503 P
GET  /metrics                         -> Prometheus text format
GET  /v1/openapi.json                 -> OpenAPI document
GET  /v1/info                         -> ServerInfo
GET  /v1/me                           -> WhoAmI                       401
PUT  /v1/clock         ClockUpdate    -> ServerInfo   (admin; frozen clock only; forward only)
                                                      400 401 403 409 422
GET  /v1/fleet/summary ?limit=20      -> FleetSummary                 401
GET  /v1/models        ?app&surface&tier&role&health&q&sort&offset&limit
                                      -> ModelPage                    401 422
GET  /v1/models/{id}                  -> ModelDetail                  401 404
GET  /v1/models/{id}/lineage          -> Lineage                      401 404
GET  /v1/models/{id}/stability ?window=1h|6h|24h|7d|28d
                                      -> StabilitySeries              401 404 422
GET  /v1/models/{id}/slo              -> SloStatus (fleetdesk.domain.slo)  401 404
POST /v1/models/{id}/actions/{kind}   ActionRequest -> ActionResult
         kind = rollback|end-experiment|escalate|halt-launch|ack|note
         400 (no key) 401 403 404 409 (stale state / key in progress) 422 (rule / key reuse)
GET  /v1/incidents     ?state&model_id&offset&limit -> IncidentPage   401 422
GET  /v1/incidents/{id}               -> IncidentDetail               401 404
GET  /v1/audit         ?model_id&actor&action&since&until&offset&limit -> AuditPage  401 422
POST /v1/metrics       IngestRequest  -> IngestResult  (admin)
                                      400 401 403 409 (bucket exists with other sums) 422
GET  /v1/events        ?last_event_id -> text/event-stream of ServerEvent
         (``Last-Event-ID`` header or query resumes after that id; ``: heartbeat``
         comments every ~15 s; SSE ``id`` = ServerEvent.id, ``event`` = ServerEvent.type,
         ``data`` = the JSON of the whole ServerEvent)
         Without any Last-Event-ID the stream starts at the newest event (no backlog).
GET  /v1/events/log    ?after&limit   -> EventPage  (polling fallback; same events)

Incidents
---------
Opened (or joined) by the server when a model's latest closed bucket turns
unstable (severity ticket) or a page burn-rate alert starts firing (severity
page); a model whose upstream model has an open incident joins that incident
(``model_ids``) instead of opening its own. An escalation on a model without
an incident opens one. An incident resolves by itself once none of its models
is unstable or alerting any more (no-data does not hold it open).

Action rules
------------
- rollback: the model must have a baseline (else 422 ``no baseline: escalate
  instead``) and still serve its own traffic; its traffic share moves to the
  baseline, ``serving_model_id`` becomes the baseline. Needs
  ``expected_serving_model_id``.
- end-experiment: role experiment only (422 otherwise), not already ended; traffic
  back to its baseline. Needs ``expected_serving_model_id``.
- halt-launch: launch phase scale-up only, not already halted; traffic frozen.
  Needs ``expected_serving_model_id``.
- escalate: target ``owner`` pages the model's owning team; ``upstream`` pages the
  team of each direct upstream model (422 when there is none). Oncall may
  escalate any model.
- ack: acknowledges the model's open incident (422 when there is none open,
  409 with the incident when it is already acknowledged).
- note: ``text`` required; attached to the model's open or acknowledged incident
  when there is one, otherwise kept as a model note (``incident_id`` null).
Every non-dry action writes one audit record, one incident timeline entry
(when an incident is involved) and one ``action`` event, in one transaction
with the idempotency key. rollback, end-experiment, halt-launch and escalate
need a non-empty ``reason``.

Permissions (``missing_permission`` in 403 problems)
----------------------------------------------------
``read`` (every role), ``act:<team>`` (oncall of that team, admin),
``escalate`` (oncall, admin), ``ingest`` and ``clock`` (admin).
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from fleetdesk.domain.bounds import FINITE, Moment, MomentText, Span
from fleetdesk.domain.model_type import FunnelStage
from fleetdesk.domain.registry import LaunchPhase, Model, Role, Tier
from fleetdesk.domain.slo import Severity, SloPolicy, SloStatus
from fleetdesk.domain.stability import Health, HealthBands, StabilityBucket

__all__ = [
    "API_PREFIX", "IDEMPOTENCY_HEADER", "REPLAYED_HEADER", "PROBLEM_CONTENT_TYPE",
    "AccessRole", "ActionKind", "ActionRequest", "ActionResult", "Attention", "AuditPage",
    "AuditRecord", "BucketConflict", "FieldError", "EVENT_DATA", "BucketClosedData", "SloChangedData",
    "IncidentEventData", "ActionEventData", "ClockEventData", "ClockUpdate", "DecodedType", "EscalationTarget",
    "EventPage", "EventType", "FleetSummary", "IncidentDetail", "IncidentPage",
    "IncidentState", "Incident", "IngestBucket", "IngestRequest", "IngestResult",
    "Lineage", "LineageEntry", "LiveState", "ModelDetail", "ModelPage", "ModelSort",
    "ModelSummary", "Note", "Page", "ProblemDetails", "ProblemType", "ServerEvent",
    "ServerInfo", "StabilityPoint", "StabilitySeries", "StateChange", "TimelineEntry",
    "WhoAmI", "Window", "Health", "Tier", "Role", "LaunchPhase", "Severity", "SloStatus",
    "Model", "HealthBands",
]

API_PREFIX = "/v1"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
PROBLEM_CONTENT_TYPE = "application/problem+json"


# Schemas are built on first use, not at import: the console starts before it needs most of them.
_LAZY = ConfigDict(defer_build=True)


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, **FINITE, **_LAZY)


# --- errors -----------------------------------------------------------------


class ProblemType(StrEnum):
    """The ``type`` URI of every problem the server returns."""

    BAD_REQUEST = "urn:fleetdesk:problem:bad-request"  # 400
    IDEMPOTENCY_KEY_MISSING = "urn:fleetdesk:problem:idempotency-key-missing"  # 400
    UNAUTHENTICATED = "urn:fleetdesk:problem:unauthenticated"  # 401
    FORBIDDEN = "urn:fleetdesk:problem:forbidden"  # 403, missing_permission set
    NOT_FOUND = "urn:fleetdesk:problem:not-found"  # 404 (suggestions may be set)
    METHOD_NOT_ALLOWED = "urn:fleetdesk:problem:method-not-allowed"  # 405
    REQUEST_TIMEOUT = "urn:fleetdesk:problem:request-timeout"  # 408 the body did not arrive in time
    PAYLOAD_TOO_LARGE = "urn:fleetdesk:problem:payload-too-large"  # 413 the body is over the route's limit
    STALE_STATE = "urn:fleetdesk:problem:stale-state"  # 409, current set
    IDEMPOTENCY_KEY_IN_PROGRESS = "urn:fleetdesk:problem:idempotency-key-in-progress"  # 409
    ALREADY_ACKNOWLEDGED = "urn:fleetdesk:problem:already-acknowledged"  # 409, incident set
    BUCKET_CONFLICT = "urn:fleetdesk:problem:bucket-conflict"  # 409, conflicts set
    CLOCK = "urn:fleetdesk:problem:clock"  # 409 clock not frozen / backwards
    VALIDATION = "urn:fleetdesk:problem:validation"  # 422, errors set
    ACTION_NOT_ALLOWED = "urn:fleetdesk:problem:action-not-allowed"  # 422 registry rule
    IDEMPOTENCY_KEY_REUSED = "urn:fleetdesk:problem:idempotency-key-reused"  # 422
    UNAVAILABLE = "urn:fleetdesk:problem:unavailable"  # 503
    STORAGE_FULL = "urn:fleetdesk:problem:storage-full"  # 507 the server's disk is full: nothing was changed
    METRICS_SOURCE = "urn:fleetdesk:problem:metrics-source"  # 502 the metrics source (Prometheus) failed a query
    INTERNAL = "urn:fleetdesk:problem:internal"  # 500, never a stack trace


class FieldError(_Wire):
    """One invalid input, located as in pydantic (e.g. ["body", "reason"])."""

    loc: list[str | int]
    message: str


class BucketConflict(_Wire):
    model_id: str
    start: Moment


class LiveState(_Wire):
    """What a model is doing right now (changed by actions)."""

    serving_model_id: str = Field(description="Model that serves this model's traffic (itself, or its baseline after rollback/end)")
    traffic_share: float = Field(ge=0.0, le=1.0)
    launch_phase: LaunchPhase
    launch_halted: bool = False
    experiment_ended: bool = False


class IncidentState(StrEnum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"


class Incident(_Wire):
    id: int
    model_id: str = Field(description="The model the incident opened on")
    model_ids: list[str] = Field(description="Every model that joined the incident, first one first")
    state: IncidentState
    severity: Severity
    title: str
    opened_at: Moment
    updated_at: Moment
    acknowledged_at: Moment | None = None
    acknowledged_by: str | None = None
    resolved_at: Moment | None = None


class ProblemDetails(BaseModel):
    """RFC 9457 problem details, plus fleetdesk's extension members."""

    model_config = ConfigDict(extra="allow", **FINITE, **_LAZY)

    type: str = "about:blank"
    title: str
    status: int
    detail: str = ""
    instance: str | None = None
    # Extensions; only the ones that apply are present.
    missing_permission: str | None = Field(default=None, description="403: the permission the caller lacks")
    current: LiveState | None = Field(default=None, description="409 stale state: the model's state now")
    incident: Incident | None = Field(default=None, description="409 already acknowledged: the incident now")
    errors: list[FieldError] | None = Field(default=None, description="422 validation: each bad input")
    conflicts: list[BucketConflict] | None = Field(default=None, description="409 bucket conflict")
    suggestions: list[str] | None = Field(default=None, description="404 unknown model: close ids")
    suggested_action: str | None = Field(default=None, description="422 rule: what to do instead, e.g. escalate")


# --- identity and server ------------------------------------------------------


class AccessRole(StrEnum):
    """What a token may do (not to be confused with a model's registry Role)."""

    VIEWER = "viewer"
    ONCALL = "oncall"
    ADMIN = "admin"


class WhoAmI(_Wire):
    user: str
    role: AccessRole
    teams: list[str] = Field(description="Team scope; empty for admin and viewer")
    demo: bool = Field(default=False, description="True: unauthenticated read-only demo mode")


class ServerInfo(_Wire):
    version: str
    api: str = API_PREFIX
    fleet: str
    now: Moment = Field(description="The server clock; use it, not the local clock, for 'ago'")
    clock_frozen: bool
    bucket: Span
    slo: SloPolicy
    demo: bool
    models: int


class ClockUpdate(_Wire):
    now: MomentText


# --- models -------------------------------------------------------------------


class Attention(StrEnum):
    """How badly a model needs a human, worst first (the fleet's sort key)."""

    PAGE = "page"  # a page-severity burn-rate alert fires
    TICKET = "ticket"  # a ticket-severity alert fires
    UNSTABLE = "unstable"  # latest bucket unstable, no alert yet
    NO_DATA = "no_data"  # latest bucket missing or undefined
    OK = "ok"

    @property
    def rank(self) -> int:
        return list(Attention).index(self)


class ModelSort(StrEnum):
    WORST = "worst"  # attention, then tier (TIER0 first), then budget left (least first), then id
    ID = "id"
    TIER = "tier"
    BUDGET = "budget"  # least error budget left first


class DecodedType(_Wire):
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
    description: str = Field(description="e.g. 'Instagram · Stories · tray (sourcing) · multi-task multi-label'")


class ModelSummary(_Wire):
    """One row of the fleet table."""

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
    health: Health = Field(description="Health of the latest closed bucket (no_data when it is missing)")
    calibration: float | None = Field(default=None, description="Calibration of the latest closed bucket")
    normalized_entropy: float | None = Field(default=None, description="NE of the latest closed bucket")
    attention: Attention
    live: LiveState
    budget_remaining: float | None
    max_burn_rate: float | None
    alerts: list[str] = Field(description="Names of firing burn-rate rules")
    open_incident_id: int | None
    last_bucket_start: Moment | None
    purpose: str


class ModelPage(_Wire):
    items: list[ModelSummary]
    total: int
    offset: int
    limit: int


class ModelDetail(_Wire):
    model: Model = Field(description="The registry record as loaded")
    decoded: DecodedType
    live: LiveState
    health: Health
    attention: Attention
    bands: HealthBands
    slo: SloStatus
    open_incident_id: int | None
    last_bucket_start: Moment | None


class LineageEntry(_Wire):
    id: str
    type: str
    tier: Tier
    role: Role
    owner_team: str
    health: Health
    attention: Attention


class Lineage(_Wire):
    model_id: str
    upstream: list[LineageEntry] = Field(description="Upstream chain, nearest first")
    downstream: list[LineageEntry] = Field(description="Blast radius: every transitive downstream model, by tier then id")
    blast_radius: dict[Tier, int] = Field(description="Downstream count per tier, every tier present")


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

    model_config = _LAZY

    health: Health

    @computed_field(description="Σ predictions / Σ labels; None with no data")  # type: ignore[prop-decorator]
    @property
    def calibration(self) -> float | None:
        return super().calibration

    @computed_field(description="Normalized entropy; None with no data")  # type: ignore[prop-decorator]
    @property
    def normalized_entropy(self) -> float | None:
        return super().normalized_entropy


class StabilitySeries(_Wire):
    model_id: str
    window: Window
    start: Moment
    end: Moment
    bucket: Span
    bands: HealthBands
    points: list[StabilityPoint] = Field(description="Buckets present in [start, end), oldest first; gaps are missing buckets")
    baseline_model_id: str | None
    baseline_points: list[StabilityPoint] = Field(description="The baseline's buckets over the same window, for overlay")


class FleetSummary(_Wire):
    evaluated_at: Moment
    total_models: int
    counts: dict[Health, dict[Tier, int]] = Field(description="Models by health then tier, every key present")
    attention: dict[Attention, int]
    open_incidents: int
    worst: list[ModelSummary] = Field(description="Models needing attention, worst first (see ModelSort.WORST); healthy ones excluded")


# --- incidents, audit ---------------------------------------------------------


class TimelineEntry(_Wire):
    id: int
    incident_id: int
    at: Moment
    kind: str = Field(description="opened, joined, unstable, alert, action, ack, note, resolved")
    model_id: str
    actor: str | None = Field(description="None for the server itself")
    text: str
    audit_id: int | None = None


class Note(_Wire):
    id: int
    model_id: str
    incident_id: int | None
    author: str
    at: Moment
    text: str


class IncidentDetail(Incident):
    timeline: list[TimelineEntry] = Field(description="Oldest first")
    notes: list[Note]


class IncidentPage(_Wire):
    items: list[Incident]
    total: int
    offset: int
    limit: int


class ActionKind(StrEnum):
    ROLLBACK = "rollback"
    END_EXPERIMENT = "end-experiment"
    ESCALATE = "escalate"
    HALT_LAUNCH = "halt-launch"
    ACK = "ack"
    NOTE = "note"

    @property
    def needs_expected_state(self) -> bool:
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH)

    @property
    def needs_reason(self) -> bool:
        return self in (ActionKind.ROLLBACK, ActionKind.END_EXPERIMENT, ActionKind.HALT_LAUNCH, ActionKind.ESCALATE)


class AuditRecord(_Wire):
    id: int
    at: Moment
    actor: str
    role: AccessRole
    action: str = Field(description="An ActionKind value")
    model_id: str
    reason: str
    before: LiveState | None
    after: LiveState | None
    idempotency_key: str
    incident_id: int | None
    detail: dict[str, Any] = Field(default_factory=dict, description="Action specifics, e.g. pages sent, note text")


class AuditPage(_Wire):
    items: list[AuditRecord] = Field(description="Newest first")
    total: int
    offset: int
    limit: int


# --- actions ------------------------------------------------------------------


class EscalationTarget(StrEnum):
    OWNER = "owner"
    UPSTREAM = "upstream"


class ActionRequest(_Wire):
    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE, **_LAZY)

    reason: str = Field(default="", max_length=2000)
    dry_run: bool = False
    expected_serving_model_id: str | None = Field(
        default=None, description="Required for rollback, end-experiment, halt-launch: the serving model the caller saw"
    )
    target: EscalationTarget = EscalationTarget.OWNER
    text: str | None = Field(default=None, max_length=10000, description="Note text (note only)")


class StateChange(_Wire):
    model_id: str
    before: LiveState
    after: LiveState


class Page(_Wire):
    """One page sent to a team's on-call rotation."""

    model_id: str = Field(description="The model the page is about")
    team: str
    rotation: str
    target: EscalationTarget
    reason: str
    incident_id: int | None
    delivered_via: str = Field(description="Name of the paging target that took it")


class ActionResult(_Wire):
    action: ActionKind
    model_id: str
    dry_run: bool
    at: Moment
    summary: str = Field(description="What happened (or would), in plain words")
    changes: list[StateChange] = Field(description="Every model whose live state changes, before and after")
    traffic_moved: float = Field(description="Traffic share moved off the model")
    traffic_to: str | None
    pages: list[Page]
    incident_id: int | None
    audit_id: int | None = Field(description="None for a dry run")
    event_id: int | None = Field(description="None for a dry run")


# --- metrics ingestion --------------------------------------------------------


class IngestBucket(StabilityBucket):
    """One closed bucket of one model; start must be aligned to the bucket length."""

    model_config = ConfigDict(frozen=True, extra="forbid", **FINITE, **_LAZY)

    model_id: str
    start: MomentText


class IngestRequest(_Wire):
    buckets: list[IngestBucket] = Field(min_length=1, max_length=50_000)


class IngestResult(_Wire):
    accepted: int = Field(description="New buckets stored")
    unchanged: int = Field(description="Buckets already stored with the same sums (no-op)")
    unstable: list[str] = Field(description="Models whose newly closed bucket is unstable")
    incident_ids: list[int] = Field(description="Incidents opened or joined because of this batch")


# --- events -------------------------------------------------------------------


class EventType(StrEnum):
    """Kinds of live event; EVENT_DATA gives the model of each one's data."""

    BUCKET_CLOSED = "bucket.closed"
    SLO_CHANGED = "slo.changed"
    INCIDENT_OPENED = "incident.opened"
    INCIDENT_UPDATED = "incident.updated"  # joined, acknowledged, noted, resolved
    ACTION = "action"
    CLOCK = "clock"


class BucketClosedData(_Wire):
    model_id: str
    start: Moment
    health: Health
    calibration: float | None
    normalized_entropy: float | None


class SloChangedData(_Wire):
    model_id: str
    health: Health
    attention: Attention
    budget_remaining: float | None
    alerts: list[str]


class IncidentEventData(_Wire):
    incident: Incident
    entry: TimelineEntry | None = None


class ActionEventData(_Wire):
    result: ActionResult
    audit: AuditRecord


class ClockEventData(_Wire):
    now: Moment


EVENT_DATA: dict[EventType, type[BaseModel]] = {
    EventType.BUCKET_CLOSED: BucketClosedData,
    EventType.SLO_CHANGED: SloChangedData,
    EventType.INCIDENT_OPENED: IncidentEventData,
    EventType.INCIDENT_UPDATED: IncidentEventData,
    EventType.ACTION: ActionEventData,
    EventType.CLOCK: ClockEventData,
}
"""The model of ``ServerEvent.data`` for each event type."""


class ServerEvent(_Wire):
    id: int
    type: EventType
    at: Moment
    model_id: str | None
    data: dict[str, Any] = Field(description="Validate with EVENT_DATA[type]")

    def payload(self) -> BaseModel:
        """The typed data of this event."""
        return EVENT_DATA[self.type].model_validate(self.data)


class EventPage(_Wire):
    items: list[ServerEvent] = Field(description="Oldest first, ids ascending")
    last_id: int = Field(description="Pass as ?after= next time (0 when the log is empty)")
