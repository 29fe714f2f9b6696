"""Fleet summary: counts by health and tier, worst models first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from fleetdesk.server import views
from fleetdesk.server.deps import BackendDep, PrincipalDep
from fleetdesk.wire import API_PREFIX, FleetSummary

router = APIRouter(prefix=f"{API_PREFIX}/fleet", tags=["fleet"])


@router.get("/summary", response_model=FleetSummary)
def summary(
    backend: BackendDep, _: PrincipalDep, limit: Annotated[int, Query(ge=0, le=1000)] = 20
) -> FleetSummary:
    return views.fleet_summary(backend, limit)
