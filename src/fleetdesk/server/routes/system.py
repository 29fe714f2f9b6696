"""Server info, the caller's identity, the (frozen) clock; health probes and Prometheus metrics."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import PlainTextResponse, Response

from fleetdesk import __version__
from fleetdesk.server import prom, slo_board
from fleetdesk.server.clock import ClockError
from fleetdesk.server.deps import BackendDep, PrincipalDep
from fleetdesk.server.events import append_event
from fleetdesk.server.idempotency import AfterCommit, request_hash, require_key, run_once
from fleetdesk.server.problems import Problem
from fleetdesk.server.store import Connection
from fleetdesk.wire import (
    API_PREFIX,
    IDEMPOTENCY_HEADER,
    REPLAYED_HEADER,
    ClockEventData,
    ClockUpdate,
    EventType,
    ProblemType,
    ServerInfo,
    WhoAmI,
)

router = APIRouter(prefix=API_PREFIX, tags=["server"])
probes = APIRouter(tags=["probes"])


def info(backend: BackendDep) -> ServerInfo:
    return ServerInfo(
        version=__version__,
        fleet=backend.config.name,
        now=backend.clock.now(),
        clock_frozen=backend.clock.frozen,
        bucket=backend.config.bucket,
        slo=backend.config.slo,
        demo=backend.demo,
        models=len(backend.registry),
    )


@router.get("/info", response_model=ServerInfo)
def server_info(backend: BackendDep, _: PrincipalDep) -> ServerInfo:
    return info(backend)


@router.get("/me", response_model=WhoAmI)
def me(principal: PrincipalDep) -> WhoAmI:
    return principal.who()


@router.put("/clock", response_model=ServerInfo)
def set_clock(
    body: ClockUpdate,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_HEADER)] = None,
) -> Response:
    """Move a frozen clock forward: buckets close, SLOs and incidents update (drills replay time this way)."""
    principal.require_admin("clock", "move the server clock")
    key = require_key(idempotency_key)
    if not backend.clock.frozen:
        raise Problem(
            409,
            ProblemType.CLOCK,
            "the server runs on the real clock; start it with --now to control time",
        )
    fingerprint = request_hash("PUT", "/v1/clock", body.model_dump(mode="json"))
    moves: list[tuple[datetime, datetime]] = []

    def work(conn: Connection) -> tuple[int, str, AfterCommit | None]:
        before = backend.clock.now()
        try:
            now = backend.clock.set(body.now)
        except ClockError as error:
            raise Problem(409, ProblemType.CLOCK, str(error)) from None
        moves.append((before, now))
        slo_board.refresh(conn, backend.config, backend.registry, backend.model_keys, now)
        append_event(conn, EventType.CLOCK, now, None, ClockEventData(now=now))
        backend.mark_refreshed(now)
        return 200, info(backend).model_dump_json(), None

    try:
        outcome = run_once(backend, principal.user, key, fingerprint, work)
    except Exception:
        for before, now in moves:  # the change was rolled back (a full disk): so is the clock
            backend.clock.undo(before, now)
        raise
    headers = {REPLAYED_HEADER: "true"} if outcome.replayed else {}
    return Response(
        outcome.body, status_code=outcome.status, media_type="application/json", headers=headers
    )


@probes.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@probes.get("/readyz")
def readyz(backend: BackendDep) -> dict[str, str | int]:
    """The database answers, its disk takes writes, and the fleet is loaded."""
    try:
        backend.store.ping()
    except Exception:
        raise Problem(503, ProblemType.UNAVAILABLE, "database not answering") from None
    full = backend.storage.not_ready() if backend.storage is not None else None
    if full is not None:
        raise Problem(503, ProblemType.UNAVAILABLE, full, title="Not ready")
    return {"status": "ready", "models": len(backend.registry)}


@probes.get("/metrics", response_class=PlainTextResponse)
def metrics(request: Request, backend: BackendDep) -> PlainTextResponse:
    """Prometheus text format."""
    return PlainTextResponse(
        prom.render(backend, request.app.state.request_metrics),
        media_type="text/plain; version=0.0.4; charset=utf-8",
    )
