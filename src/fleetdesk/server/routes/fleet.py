"""Fleet summary: counts by health and tier, worst models first; the fleet table's rows."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from fleetdesk.server import views
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, PrincipalDep
from fleetdesk.wire import API_PREFIX, FleetSummary, ModelRows

router = APIRouter(prefix=f"{API_PREFIX}/fleet", tags=["fleet"])


@router.get("/summary", response_model=FleetSummary)
def summary(
    backend: BackendDep, _: PrincipalDep, limit: Annotated[int, Query(ge=0, le=1000)] = 20
) -> FleetSummary:
    return views.fleet_summary(backend, limit)


@router.get("/rows", response_model=ModelRows)
def rows(
    backend: BackendDep,
    _: PrincipalDep,
    offset: Annotated[int, Query(ge=0, le=SQL_INT_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
) -> Response:
    """The fleet table's rows, worst first: every model in a few pages (``GET /v1/models`` for filters)."""
    return Response(views.fleet_rows(backend, offset, limit), media_type="application/json")
