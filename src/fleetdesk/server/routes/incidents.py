"""Incidents: list and detail with timeline and notes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from fleetdesk.server import incidents
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, IdPath, PrincipalDep, TextQuery
from fleetdesk.server.problems import Problem
from fleetdesk.wire import API_PREFIX, IncidentDetail, IncidentPage, IncidentState, ProblemType

router = APIRouter(prefix=f"{API_PREFIX}/incidents", tags=["incidents"])


@router.get("", response_model=IncidentPage)
def list_incidents(
    backend: BackendDep,
    _: PrincipalDep,
    state: IncidentState | None = None,
    model_id: TextQuery = None,
    offset: Annotated[int, Query(ge=0, le=SQL_INT_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> IncidentPage:
    with backend.store.read() as conn:
        return incidents.list_incidents(conn, state, model_id, offset, limit)


@router.get("/{incident_id}", response_model=IncidentDetail)
def incident_detail(incident_id: IdPath, backend: BackendDep, _: PrincipalDep) -> IncidentDetail:
    with backend.store.read() as conn:
        detail = incidents.incident_detail(conn, backend.registry, incident_id)
    if detail is None:
        raise Problem(
            404, ProblemType.NOT_FOUND, f"no incident {incident_id}", title="Unknown incident"
        )
    return detail
