"""The audit log: append-only, read with filters."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from fleetdesk.domain.bounds import MomentText
from fleetdesk.server import views
from fleetdesk.server.deps import SQL_INT_MAX, BackendDep, PrincipalDep, TextQuery
from fleetdesk.wire import API_PREFIX, ActionKind, AuditPage

router = APIRouter(prefix=f"{API_PREFIX}/audit", tags=["audit"])


@router.get("", response_model=AuditPage)
def audit(
    backend: BackendDep,
    _: PrincipalDep,
    model_id: TextQuery = None,
    actor: TextQuery = None,
    action: ActionKind | None = None,
    since: MomentText | None = None,
    until: MomentText | None = None,
    offset: Annotated[int, Query(ge=0, le=SQL_INT_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AuditPage:
    return views.audit_page(
        backend,
        model_id=model_id,
        actor=actor,
        action=None if action is None else action.value,
        since=since,
        until=until,
        offset=offset,
        limit=limit,
    )
