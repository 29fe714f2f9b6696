"""FastAPI dependencies: the backend and the authenticated caller."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Path, Query, Request

from fleetdesk.server.auth import Principal, authenticate
from fleetdesk.server.backend import Backend


def get_backend(request: Request) -> Backend:
    backend: Backend = request.app.state.backend
    backend.sync_registry()
    return backend


def get_principal(
    backend: Annotated[Backend, Depends(get_backend)],
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> Principal:
    return authenticate(backend.store.connection(), authorization, backend.demo)


SQL_INT_MAX = 2**63 - 1
"""Largest id, offset or position SQLite can bind; larger query values are a 422, not an OverflowError 500."""

TEXT_MAX = 256
"""Longest id or name a query or path may carry: the registry's longest model id (domain.registry.Model)."""

ModelIdPath = Annotated[str, Path(min_length=1, max_length=TEXT_MAX)]
TextQuery = Annotated[str | None, Query(max_length=TEXT_MAX)]
IdPath = Annotated[int, Path(ge=0, le=SQL_INT_MAX)]

BackendDep = Annotated[Backend, Depends(get_backend)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
