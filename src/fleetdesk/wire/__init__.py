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
GET  /v1/fleet/rows    ?offset&limit  -> ModelRows (the fleet table, worst first)  401 422
GET  /v1/models        ?app&surface&tier&role&health&q&sort&offset&limit
                                      -> ModelPage                    401 422
GET  /v1/models/{id}                  -> ModelDetail                  401 404
GET  /v1/models/{id}/lineage          -> Lineage                      401 404
GET  /v1/models/{id}/stability ?window=1h|6h|24h|7d|28d&task
                                      -> StabilitySeries              401 404 422
GET  /v1/models/{id}/slo              -> SloStatus (fleetdesk.domain.slo)  401 404
POST /v1/models/{id}/actions/{kind}   ActionRequest -> ActionResult
         kind = rollback|end-experiment|escalate|halt-launch|resume-launch|ack|note
         400 (no key) 401 403 404 409 (stale state / key in progress) 422 (rule / key reuse)
GET  /v1/incidents     ?state&model_id&offset&limit -> IncidentPage   401 422
GET  /v1/incidents/{id}               -> IncidentDetail               401 404
GET  /v1/audit         ?model_id&actor&action&since&until&offset&limit -> AuditPage  401 422
POST /v1/metrics       IngestRequest  -> IngestResult  (admin)
                                      400 401 403 409 (bucket exists with other sums) 422
POST /v1/registry/models ModelWrite   -> RegistryChangeResult   create; 409 model-exists
PUT  /v1/registry/models/{id} ModelWrite -> RegistryChangeResult replace the record
POST /v1/registry/models/{id}/retire ModelRetire -> RegistryChangeResult
PUT  /v1/registry/types/{type} TypeWrite -> RegistryChangeResult create or replace a type record
POST /v1/registry/types/{type}/retire ModelRetire -> RegistryChangeResult
POST /v1/registry/apply RegistryApply -> RegistryChangeResult   declarative (models, types, prune), all or nothing
         400 (no key) 401 403 (act:<team> of the old and the new owner) 404 409 422 (registry-invalid:
         ``errors`` locate every violation as ["models", id, field] or ["types", type, ...];
         every body takes dry_run)
GET  /v1/registry      ?as_of|version -> RegistrySnapshot             401 404 422
GET  /v1/registry/models/{id} ?as_of|version -> Model                 401 404 422
GET  /v1/registry/models/{id}/history -> ModelHistory (newest first)  401 404
GET  /v1/registry/types/{type}/history -> TypeHistory (newest first)  401 404
GET  /v1/registry/diff ?from&to       -> RegistryDiff                 401 404 422
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
(``model_ids``, ``cause`` upstream) instead of opening its own. A model of the
same app and surface (any funnel stage) as an open incident's model, whose
trouble began in the same or the next bucket, with a healthy upstream, joins
that incident too: ``cause`` shared, ``group`` says which surface and since
when ("shared cause suspected"). An escalation on a model without an incident
opens one. An incident resolves by itself once none of its models is unstable
or alerting any more (no-data does not hold it open). The detail lists its
``members`` with their state, and collapses a server entry repeated with
nothing a person did in between into one entry (``repeats``, ``last_at``).

A slot close judges no model whose latest bucket is still on its way (its
previous one is in): it keeps its state until the bucket's ingest judges it,
so no intermediate state (a page dropping to a ticket for a moment) is sent.

Action rules
------------
- rollback: the model must have a baseline (else 422 ``no baseline: escalate
  instead``) and still serve its own traffic; its traffic share moves to the
  baseline, ``serving_model_id`` becomes the baseline. Needs
  ``expected_serving_model_id``.
- end-experiment: role experiment or holdout only (422 otherwise), not already
  ended; traffic back to its baseline. Needs ``expected_serving_model_id``.
- Both carry the baseline's health (``target_health``, also
  ``ModelDetail.baseline_health``). When it is unstable, paging or without
  data the option's ``warnings`` say so first, its ``confirmation`` is
  ``acknowledge`` and the request must name it in ``acknowledged_target``
  (409 ``target-unhealthy`` with ``target_health`` otherwise). On a holdout
  both need ``holdout_override`` (422 ``holdout-override-required``): they end
  its measurement. Dry runs are never refused for these: they say what is
  needed (``confirmation``, ``acknowledge_target``, ``override_required``).
- halt-launch: launch phase scale-up only, not already halted; traffic frozen.
  Needs ``expected_serving_model_id``.
- resume-launch: a halted launch only; its phase and traffic may move again
  (registry changes of a halted launch's phase or traffic are refused).
  Needs ``expected_serving_model_id``.
- escalate: target ``owner`` pages the model's owning team; ``upstream`` pages the
  team of each direct upstream model (422 when there is none); ``surface``, on a
  shared-cause incident, pages the app's data-pipeline rotation (fleet file
  ``pipelines``), else every team owning a member (422 when the incident is not
  one). Oncall may escalate any model. An incident already escalated gets a
  warning, not a refusal.
- ack: acknowledges the model's open incident (422 when there is none open,
  409 with the incident when it is already acknowledged).
- note: ``text`` required; attached to the model's open or acknowledged incident
  when there is one, otherwise kept as a model note (``incident_id`` null).
Every non-dry action writes one audit record, one incident timeline entry
(when an incident is involved) and one ``action`` event, in one transaction
with the idempotency key. rollback, end-experiment, halt-launch, resume-launch
and escalate need a non-empty ``reason``.

Permissions (``missing_permission`` in 403 problems)
----------------------------------------------------
``read`` (every role), ``act:<team>`` (oncall of that team, admin),
``escalate`` (oncall, admin), ``ingest`` and ``clock`` (admin).
"""

from __future__ import annotations

from fleetdesk.domain.attention import Attention
from fleetdesk.domain.comparison import SignalGap
from fleetdesk.domain.live import LiveState
from fleetdesk.domain.playbook import (
    ActionKind,
    ActionOption,
    Confirmation,
    EscalationTarget,
    TargetHealth,
)
from fleetdesk.domain.policy import PagingVerdict
from fleetdesk.domain.registry import LaunchPhase, Model, Role, Tier
from fleetdesk.domain.slo import Severity, SloStatus
from fleetdesk.domain.stability import Health, HealthBands
from fleetdesk.wire.actions import (
    ActionRequest,
    ActionResult,
    AuditPage,
    AuditRecord,
    Page,
    StateChange,
)
from fleetdesk.wire.base import (
    API_PREFIX,
    IDEMPOTENCY_HEADER,
    PROBLEM_CONTENT_TYPE,
    REPLAYED_HEADER,
)
from fleetdesk.wire.events import (
    EVENT_DATA,
    ActionEventData,
    BucketClosedData,
    ClockEventData,
    EventPage,
    EventType,
    IncidentEventData,
    ServerEvent,
    SloChangedData,
)
from fleetdesk.wire.incidents import (
    Incident,
    IncidentCause,
    IncidentDetail,
    IncidentGroup,
    IncidentMember,
    IncidentPage,
    IncidentState,
    Note,
    TimelineEntry,
)
from fleetdesk.wire.ingest import IngestBucket, IngestRequest, IngestResult
from fleetdesk.wire.models import (
    DecodedType,
    FleetSummary,
    Lineage,
    LineageEntry,
    ModelDetail,
    ModelPage,
    ModelRow,
    ModelRows,
    ModelSort,
    ModelSummary,
    StabilityPoint,
    StabilitySeries,
    TaskHealth,
    Window,
)
from fleetdesk.wire.problems import BucketConflict, FieldError, ProblemDetails, ProblemType
from fleetdesk.wire.registry import (
    ModelHistory,
    ModelRetire,
    ModelVersion,
    ModelWrite,
    RegistryApply,
    RegistryChangeResult,
    RegistryDiff,
    RegistryEventData,
    RegistrySnapshot,
    TypeHistory,
    TypeVersion,
    TypeWrite,
)
from fleetdesk.wire.server import AccessRole, ClockUpdate, ServerInfo, WhoAmI

__all__ = [
    "API_PREFIX",
    "IDEMPOTENCY_HEADER",
    "REPLAYED_HEADER",
    "PROBLEM_CONTENT_TYPE",
    "AccessRole",
    "ActionKind",
    "ActionRequest",
    "ActionResult",
    "Attention",
    "AuditPage",
    "AuditRecord",
    "BucketConflict",
    "FieldError",
    "EVENT_DATA",
    "BucketClosedData",
    "SloChangedData",
    "IncidentEventData",
    "ActionEventData",
    "ClockEventData",
    "ClockUpdate",
    "DecodedType",
    "EscalationTarget",
    "EventPage",
    "EventType",
    "FleetSummary",
    "IncidentDetail",
    "IncidentPage",
    "IncidentState",
    "Incident",
    "IngestBucket",
    "IngestRequest",
    "IngestResult",
    "Lineage",
    "LineageEntry",
    "LiveState",
    "ModelDetail",
    "ModelPage",
    "ModelRow",
    "ModelRows",
    "ModelSort",
    "ModelSummary",
    "Note",
    "Page",
    "ProblemDetails",
    "ProblemType",
    "ServerEvent",
    "ServerInfo",
    "StabilityPoint",
    "StabilitySeries",
    "StateChange",
    "TimelineEntry",
    "WhoAmI",
    "Window",
    "Health",
    "Tier",
    "Role",
    "LaunchPhase",
    "Severity",
    "SloStatus",
    "PagingVerdict",
    "Model",
    "HealthBands",
    "ActionOption",
    "Confirmation",
    "IncidentCause",
    "IncidentGroup",
    "IncidentMember",
    "TargetHealth",
    "TaskHealth",
    "SignalGap",
    "ModelHistory",
    "ModelRetire",
    "ModelVersion",
    "ModelWrite",
    "RegistryApply",
    "RegistryChangeResult",
    "RegistryDiff",
    "RegistryEventData",
    "RegistrySnapshot",
    "TypeHistory",
    "TypeVersion",
    "TypeWrite",
]
