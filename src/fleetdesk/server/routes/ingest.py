"""Metric ingestion: POST batches of closed bucket sums."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header
from fastapi.responses import Response

from fleetdesk.server.deps import BackendDep, PrincipalDep
from fleetdesk.server.idempotency import AfterCommit, request_hash, require_key, run_once
from fleetdesk.server.ingest import ingest
from fleetdesk.server.store import Connection
from fleetdesk.wire import (
    API_PREFIX,
    IDEMPOTENCY_HEADER,
    REPLAYED_HEADER,
    IngestRequest,
    IngestResult,
    ProblemDetails,
)

router = APIRouter(prefix=API_PREFIX, tags=["metrics"])

_ERRORS = {status: {"model": ProblemDetails} for status in (400, 401, 403, 409, 422)}


@router.post("/metrics", response_model=IngestResult, responses=_ERRORS)
def ingest_buckets(
    body: IngestRequest,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_HEADER)] = None,
) -> Response:
    principal.require_admin("ingest", "ingest metrics")
    key = require_key(idempotency_key)
    fingerprint = request_hash("POST", "/v1/metrics", body.model_dump(mode="json"))

    def work(conn: Connection) -> tuple[int, str, AfterCommit | None]:
        result = ingest(conn, backend, body, backend.clock.now())
        return 200, result.model_dump_json(), None

    outcome = run_once(backend, principal.user, key, fingerprint, work)
    headers = {REPLAYED_HEADER: "true"} if outcome.replayed else {}
    return Response(
        outcome.body, status_code=outcome.status, media_type="application/json", headers=headers
    )
