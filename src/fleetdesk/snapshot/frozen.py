"""A read-only stand-in for FleetdeskClient that answers from a snapshot.

The console takes it instead of the live client (``fleetdesk open``), so the
same fleet, model and incident screens run on the frozen data. It answers the
reads the way the server would have at export time; a model, window or
incident the snapshot does not hold is a NotFound that says so; the identity
is a viewer (no action keys); the event feed never speaks; and every change is
refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from fleetdesk.client import Forbidden, ModelFilters, NotFound, PageRequest
from fleetdesk.domain.slo import SloStatus
from fleetdesk.domain.text import sanitize
from fleetdesk.snapshot.bundle import RelatedModel, Snapshot
from fleetdesk.wire import (
    AccessRole,
    ActionKind,
    ActionResult,
    AuditPage,
    EventPage,
    FleetSummary,
    Incident,
    IncidentDetail,
    IncidentPage,
    IncidentState,
    Lineage,
    ModelDetail,
    ModelPage,
    ModelRow,
    ModelRows,
    ModelSort,
    ModelSummary,
    ServerInfo,
    StabilitySeries,
    WhoAmI,
    Window,
)


class FrozenClient:
    """Answers the console's reads from one snapshot; refuses every action."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.base_url = snapshot.server.url
        self._closed = asyncio.Event()

    def __repr__(self) -> str:
        return f"FrozenClient(snapshot by {self.snapshot.exported_by!r} at {self.snapshot.exported_at.isoformat()})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._closed.set()

    @property
    def banner(self) -> str:
        """'snapshot by USER at TIME (read-only)', sanitized for the screen."""
        at = self.snapshot.exported_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return sanitize(f"snapshot by {self.snapshot.exported_by} at {at} (read-only)")

    # --- reads ----------------------------------------------------------------

    async def info(self) -> ServerInfo:
        return self.snapshot.server.info

    async def me(self) -> WhoAmI:
        return WhoAmI(user=self.snapshot.exported_by, role=AccessRole.VIEWER, teams=[])

    async def fleet_summary(self, limit: int = 20) -> FleetSummary:
        return self.snapshot.fleet.model_copy(update={"worst": self.snapshot.fleet.worst[:limit]})

    async def list_models(
        self,
        filters: ModelFilters | None = None,
        sort: ModelSort = ModelSort.WORST,
        page: PageRequest | None = None,
    ) -> ModelPage:
        page = page or PageRequest()
        rows = [row for row in self.snapshot.models if _matches(row, filters or ModelFilters())]
        rows = _sorted(rows, sort)
        return ModelPage(
            items=rows[page.offset : page.offset + page.limit],
            total=len(rows),
            offset=page.offset,
            limit=page.limit,
        )

    async def fleet_rows(self, page: PageRequest | None = None) -> ModelRows:
        listed = await self.list_models(page=page)
        return ModelRows(
            rows=[ModelRow.of(model) for model in listed.items],
            total=listed.total,
            offset=listed.offset,
            limit=listed.limit,
        )

    async def model(self, model_id: str) -> ModelDetail:
        if model_id != self.snapshot.model_id:
            return self._related(model_id).model
        detail = self.snapshot.model
        if self.snapshot.incident is not None:
            # The handed-over incident is the one to show, even if it was resolved by export time.
            detail = detail.model_copy(update={"open_incident_id": self.snapshot.incident.id})
        return detail

    async def lineage(self, model_id: str) -> Lineage:
        if model_id != self.snapshot.model_id:
            return self._related(model_id).lineage
        return self.snapshot.lineage

    async def stability(
        self,
        model_id: str,
        window: Window = Window.H24,
        holdout: bool = False,
        task: str | None = None,
    ) -> StabilitySeries:
        """The series as exported (with the holdout's buckets only if they were overlaid then); a task's only if
        it was exported."""
        held = (
            self.snapshot.stability
            if model_id == self.snapshot.model_id
            else self._related(model_id).stability
        )
        series = next(
            (item for item in held if item.window == Window(window) and item.task == task), None
        )
        if series is None:
            windows = ", ".join(item.window.value for item in held if item.task == task) or "none"
            of = sanitize(model_id, 200) + ("" if task is None else f" task {sanitize(task, 40)}")
            raise NotFound(
                f"the snapshot holds no {Window(window).value} series of {of} (it holds: {windows})",
                status=404,
            )
        return series

    async def slo(self, model_id: str) -> SloStatus:
        return (await self.model(model_id)).slo

    async def incidents(
        self,
        state: IncidentState | None = None,
        model_id: str | None = None,
        page: PageRequest | None = None,
    ) -> IncidentPage:
        page = page or PageRequest()
        held = self.snapshot.incident
        items = (
            [held]
            if held is not None
            and (state is None or held.state == state)
            and (model_id is None or model_id in held.model_ids)
            else []
        )
        # The page carries incidents without timeline and notes, as the server's list does.
        listed = [Incident.model_validate(item.model_dump()) for item in items]
        return IncidentPage(
            items=listed[page.offset : page.offset + page.limit],
            total=len(listed),
            offset=page.offset,
            limit=page.limit,
        )

    async def incident(self, incident_id: int) -> IncidentDetail:
        held = [self.snapshot.incident, *(item.incident for item in self.snapshot.related)]
        found = next(
            (item for item in held if item is not None and item.id == int(incident_id)), None
        )
        if found is None:
            raise NotFound(f"incident {int(incident_id)} is not in this snapshot", status=404)
        return found

    async def audit(
        self,
        model_id: str | None = None,
        actor: str | None = None,
        action: ActionKind | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        page: PageRequest | None = None,
    ) -> AuditPage:
        page = page or PageRequest()
        rows = [
            record
            for record in self.snapshot.audit
            if (model_id is None or record.model_id == model_id)
            and (actor is None or record.actor == actor)
            and (action is None or record.action == ActionKind(action).value)
            and (since is None or record.at >= since)
            and (until is None or record.at < until)
        ]
        return AuditPage(
            items=rows[page.offset : page.offset + page.limit],
            total=len(rows),
            offset=page.offset,
            limit=page.limit,
        )

    async def event_log(self, after: int = 0, limit: int = 500) -> EventPage:
        return EventPage(items=[], last_id=after)

    def events(self, last_event_id: int | None = None) -> AsyncIterator[Any]:
        """A feed that never speaks: frozen data does not change. It ends when the client closes."""
        return self._silence()

    async def _silence(self) -> AsyncIterator[Any]:
        await self._closed.wait()
        return
        yield  # makes this an async generator

    # --- changes --------------------------------------------------------------

    async def perform(self, intent: Any) -> ActionResult:
        raise Forbidden("this is a read-only snapshot: actions go to the live console", status=403)

    def _related(self, model_id: str) -> RelatedModel:
        found = next(
            (item for item in self.snapshot.related if item.model.model.id == model_id), None
        )
        if found is None:
            raise NotFound(
                f"model {sanitize(model_id, 200)} is not in this snapshot; it holds "
                f"{sanitize(self.snapshot.model_id, 200)} and the models one key away from it",
                status=404,
            )
        return found


def _matches(row: ModelSummary, filters: ModelFilters) -> bool:
    text = f"{row.id} {row.type} {row.owner_team}".lower()
    return (
        (filters.app is None or row.app == filters.app)
        and (filters.surface is None or row.surface == filters.surface)
        and (not filters.tier or row.tier in filters.tier)
        and (filters.role is None or row.role == filters.role)
        and (filters.health is None or row.health == filters.health)
        and (filters.q is None or filters.q.lower() in text)
    )


def _sorted(rows: list[ModelSummary], sort: ModelSort) -> list[ModelSummary]:
    if sort is ModelSort.ID:
        return sorted(rows, key=lambda row: row.id)
    if sort is ModelSort.TIER:
        return sorted(rows, key=lambda row: (row.tier.rank, row.id))
    if sort is ModelSort.BUDGET:
        return sorted(
            rows,
            key=lambda row: (row.budget_remaining is None, row.budget_remaining or 0.0, row.id),
        )
    return rows  # exported worst first, in the server's own order
