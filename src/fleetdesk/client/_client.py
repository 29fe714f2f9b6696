"""FleetdeskClient: typed async methods over the /v1 API."""

from __future__ import annotations

import random
import ssl
from datetime import datetime
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from fleetdesk.client._calls import BearerAuth, Call, Caller
from fleetdesk.client._errors import FleetdeskError, InvalidAddress
from fleetdesk.client._events import EventFeed
from fleetdesk.client._intent import ActionIntent, new_idempotency_key
from fleetdesk.client._policy import ClientTimeouts, EventStreamPolicy, RetryPolicy
from fleetdesk.client._registry_intent import RegistryIntent
from fleetdesk.domain.registry import Model, Role, Tier
from fleetdesk.domain.slo import SloStatus
from fleetdesk.domain.stability import Health
from fleetdesk.wire import (
    API_PREFIX,
    ActionKind,
    ActionResult,
    AuditPage,
    ClockUpdate,
    EventPage,
    FleetSummary,
    IncidentDetail,
    IncidentPage,
    IncidentState,
    IngestBucket,
    IngestRequest,
    IngestResult,
    Lineage,
    ModelDetail,
    ModelHistory,
    ModelPage,
    ModelRows,
    ModelSort,
    RegistryChangeResult,
    RegistryDiff,
    RegistrySnapshot,
    ServerInfo,
    StabilitySeries,
    TypeHistory,
    WhoAmI,
    Window,
)

T = TypeVar("T")

USER_AGENT = "fleetdesk-client"
DEFAULT_TIMEOUTS = ClientTimeouts()
DEFAULT_RETRY = RetryPolicy()
DEFAULT_STREAM = EventStreamPolicy()


class ModelFilters(BaseModel):
    """Which models to list; None means any."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    app: str | None = None
    surface: str | None = None
    tier: tuple[Tier, ...] = Field(default=(), description="Any of these tiers")
    role: Role | None = None
    health: Health | None = None
    q: str | None = Field(
        default=None, description="Text in the id, type, team, rotation or purpose"
    )


class PageRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=50, ge=1)


class FleetdeskClient:
    """The console's only way to the backend. Use as ``async with FleetdeskClient(...) as client``."""

    def __init__(
        self,
        base_url: str,
        token: SecretStr | None = None,
        *,
        timeouts: ClientTimeouts = DEFAULT_TIMEOUTS,
        retry: RetryPolicy = DEFAULT_RETRY,
        stream: EventStreamPolicy = DEFAULT_STREAM,
        transport: httpx.AsyncBaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if token is not None and not isinstance(token, SecretStr):
            raise TypeError("token must be a pydantic SecretStr (use load_token)")
        try:
            url = httpx.URL(base_url)
        except httpx.InvalidURL:
            url = httpx.URL()
        if url.scheme not in ("http", "https") or not url.host:
            raise InvalidAddress(
                "the server address must look like http://HOST:PORT or https://HOST"
            )
        if url.userinfo:
            # A secret in the URL would show up in reprs and messages; tokens go in their own place.
            raise InvalidAddress(
                "the server address must not contain credentials; use a token (load_token)"
            )
        self.base_url = base_url.rstrip("/")
        self._tls = url.scheme == "https"
        self.timeouts = timeouts
        self.retry = retry
        self.stream_policy = stream
        self._token = token
        self._transport = transport
        self._rng = rng or random.Random()
        self._http: httpx.AsyncClient | None = None
        self._caller: Caller | None = None

    def __repr__(self) -> str:
        return (
            f"FleetdeskClient(base_url={self.base_url!r}, token={'set' if self._token else 'none'})"
        )

    async def __aenter__(self) -> Self:
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            auth=BearerAuth(self._token) if self._token is not None else None,
            timeout=self.timeouts.for_httpx(),
            headers={"User-Agent": USER_AGENT},
            transport=self._transport,
            follow_redirects=False,
            # Loading the CA bundle costs ~30 ms of start-up. A plain-http client never speaks TLS (it
            # follows no redirects), so it gets a context that trusts nothing, not one that checks nothing.
            verify=True if self._tls else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
        )
        self._caller = Caller(self._http, self.timeouts, self.retry, self._token, self._rng)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._http = self._caller = None

    async def _run(self, call: Call[T]) -> T:
        if self._caller is None:
            raise RuntimeError("use the client inside 'async with FleetdeskClient(...) as client'")
        return await self._caller.run(call)

    async def _get(self, path: str, shape: type[T], params: dict[str, Any] | None = None) -> T:
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None and v != ()}
        return await self._run(Call("GET", API_PREFIX + path, shape, params=query or None))

    # --- reads -------------------------------------------------------------

    async def info(self) -> ServerInfo:
        """Server version, fleet, clock and SLO policy."""
        return await self._get("/info", ServerInfo)

    async def me(self) -> WhoAmI:
        """Who the token belongs to: user, role and teams."""
        return await self._get("/me", WhoAmI)

    async def fleet_summary(self, limit: int = 20) -> FleetSummary:
        """Counts by health × tier and the worst models first."""
        return await self._get("/fleet/summary", FleetSummary, {"limit": limit})

    async def fleet_rows(self, page: PageRequest | None = None) -> ModelRows:
        """One page of the fleet table's rows, worst first (the whole fleet's in a few pages)."""
        return await self._get("/fleet/rows", ModelRows, (page or PageRequest()).model_dump())

    async def list_models(
        self,
        filters: ModelFilters | None = None,
        sort: ModelSort = ModelSort.WORST,
        page: PageRequest | None = None,
    ) -> ModelPage:
        """One page of models matching ``filters``, in ``sort`` order."""
        params: dict[str, Any] = (filters or ModelFilters()).model_dump()
        params.update(sort=sort, **(page or PageRequest()).model_dump())
        return await self._get("/models", ModelPage, params)

    async def model(self, model_id: str) -> ModelDetail:
        """A model with its registry record, decoded type, live state, bands and SLO."""
        return await self._get(f"/models/{_segment(model_id)}", ModelDetail)

    async def lineage(self, model_id: str) -> Lineage:
        """Upstream chain and downstream blast radius."""
        return await self._get(f"/models/{_segment(model_id)}/lineage", Lineage)

    async def stability(
        self,
        model_id: str,
        window: Window = Window.H24,
        holdout: bool = False,
        task: str | None = None,
    ) -> StabilitySeries:
        """Calibration and NE per bucket over ``window``, with the baseline's series (and the holdout's, asked);
        of one task of a multi-task model, or of the model as a whole."""
        params: dict[str, Any] = {"window": window}
        if holdout:
            params["holdout"] = "true"
        if task is not None:
            params["task"] = task
        return await self._get(f"/models/{_segment(model_id)}/stability", StabilitySeries, params)

    async def slo(self, model_id: str) -> SloStatus:
        """Objective, budget left, burn rates and firing alerts."""
        return await self._get(f"/models/{_segment(model_id)}/slo", SloStatus)

    async def incidents(
        self,
        state: IncidentState | None = None,
        model_id: str | None = None,
        page: PageRequest | None = None,
    ) -> IncidentPage:
        """Incidents, optionally by state or model."""
        params = {"state": state, "model_id": model_id, **(page or PageRequest()).model_dump()}
        return await self._get("/incidents", IncidentPage, params)

    async def incident(self, incident_id: int) -> IncidentDetail:
        """One incident with its timeline and notes."""
        return await self._get(f"/incidents/{int(incident_id)}", IncidentDetail)

    async def audit(
        self,
        model_id: str | None = None,
        actor: str | None = None,
        action: ActionKind | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        page: PageRequest | None = None,
    ) -> AuditPage:
        """Audit records, newest first."""
        params = {
            "model_id": model_id,
            "actor": actor,
            "action": action,
            "since": since,
            "until": until,
            **(page or PageRequest()).model_dump(),
        }
        return await self._get("/audit", AuditPage, params)

    async def event_log(self, after: int = 0, limit: int = 500) -> EventPage:
        """Events with id greater than ``after``, oldest first (the polling way to follow the fleet)."""
        return await self._get("/events/log", EventPage, {"after": after, "limit": limit})

    async def latest_event_id(self) -> int:
        """The newest event's id (0 when the log is empty): read after it to see only what happens next."""
        after = 0
        while True:
            page = await self.event_log(after=after, limit=500)
            if len(page.items) < 500:
                return page.last_id
            after = page.last_id

    async def registry(
        self, as_of: datetime | None = None, version: int | None = None
    ) -> RegistrySnapshot:
        """The whole registry now, as of a time, or at a version."""
        return await self._get("/registry", RegistrySnapshot, {"as_of": as_of, "version": version})

    async def registry_model(
        self, model_id: str, as_of: datetime | None = None, version: int | None = None
    ) -> Model:
        """One model's registry record now, as of a time, or at a version."""
        return await self._get(
            f"/registry/models/{_segment(model_id)}", Model, {"as_of": as_of, "version": version}
        )

    async def model_history(self, model_id: str) -> ModelHistory:
        """Every recorded change to one model, newest first."""
        return await self._get(f"/registry/models/{_segment(model_id)}/history", ModelHistory)

    async def type_history(self, type_string: str) -> TypeHistory:
        """Every recorded change to one model type's record, newest first."""
        return await self._get(f"/registry/types/{_segment(type_string)}/history", TypeHistory)

    async def registry_diff(self, from_version: int, to_version: int | None = None) -> RegistryDiff:
        """What changed between two registry versions (``to_version`` default: the newest)."""
        return await self._get(
            "/registry/diff", RegistryDiff, {"from": from_version, "to": to_version}
        )

    def events(self, last_event_id: int | None = None) -> EventFeed:
        """Live updates: the event stream, resumed after drops, or polling when there is no stream."""
        if self._http is None or self._caller is None:
            raise RuntimeError("use the client inside 'async with FleetdeskClient(...) as client'")
        return EventFeed(
            self._http,
            self._caller,
            self.event_log,
            self.stream_policy,
            self.timeouts,
            last_event_id,
        )

    # --- changes -----------------------------------------------------------

    async def perform(self, intent: ActionIntent) -> ActionResult:
        """Send ``intent``; sending the same intent again is safe (same idempotency key)."""
        call = Call(
            "POST",
            f"{API_PREFIX}/models/{_segment(intent.model_id)}/actions/{intent.kind.value}",
            ActionResult,
            body=intent.request,
            idempotency_key=intent.idempotency_key,
            what=intent.describe(),
        )
        return await self._run(call)

    async def change_registry(self, intent: RegistryIntent) -> RegistryChangeResult:
        """Send a registry change; sending the same intent again is safe (same idempotency key)."""
        call = Call(
            intent.method,
            intent.path,
            RegistryChangeResult,
            body=intent.request,
            idempotency_key=intent.idempotency_key,
            what=intent.describe(),
        )
        return await self._run(call)

    async def ingest(
        self, buckets: list[IngestBucket], *, idempotency_key: str | None = None
    ) -> IngestResult:
        """Store closed metric buckets (admin); idempotent per model and bucket."""
        call = Call(
            "POST",
            f"{API_PREFIX}/metrics",
            IngestResult,
            body=IngestRequest(buckets=buckets),
            idempotency_key=idempotency_key or new_idempotency_key(),
            what=f"ingest of {len(buckets)} bucket(s)",
        )
        return await self._run(call)

    async def set_clock(self, now: datetime, *, idempotency_key: str | None = None) -> ServerInfo:
        """Move a frozen server clock forward (admin; drills and tests)."""
        call = Call(
            "PUT",
            f"{API_PREFIX}/clock",
            ServerInfo,
            body=ClockUpdate(now=now),
            idempotency_key=idempotency_key or new_idempotency_key(),
            what="clock change",
        )
        return await self._run(call)


def _segment(value: str) -> str:
    """A path segment, percent-encoded so an id can never change the route."""
    if not value:
        raise FleetdeskError("an empty id cannot name a resource")
    return quote(value, safe="")


def _query_value(value: Any) -> str | list[str]:
    if isinstance(value, tuple | list):
        return [str(_query_value(item)) for item in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value.value) if hasattr(value, "value") else str(value)
