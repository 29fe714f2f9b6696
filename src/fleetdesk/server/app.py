"""The FastAPI application: routers under /v1, problem+json errors, request metrics, SLO ticker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import AsyncIterator

from anyio import to_thread
from fastapi import FastAPI

from fleetdesk import __version__
from fleetdesk.server import openapi, problems
from fleetdesk.server.backend import Backend

# FastAPI gives a request body parameter an alias that pydantic >= 2.12 reports as unused when it builds
# the body's schema (a known false positive, pydantic/pydantic#12356). Built lazily, that happens on the
# first request, and the warning would land on whatever terminal the server shares.
warnings.filterwarnings(
    "ignore",
    message="The 'alias' attribute with value 'body' was provided to the `Field",
    category=UserWarning,
)
from fleetdesk.server.limits import BodyLimitMiddleware
from fleetdesk.server.prom import RequestMetrics, RequestMetricsMiddleware
from fleetdesk.server.routes import (
    actions,
    audit,
    events,
    fleet,
    incidents,
    ingest,
    models,
    registry,
    registry_history,
    system,
)
from fleetdesk.wire import API_PREFIX

log = logging.getLogger("fleetdesk.server")

TICK_SECONDS = 5.0
"""How often the server checks whether a bucket slot closed (real clock)."""


async def _tick(backend: Backend) -> None:
    while True:
        await asyncio.sleep(TICK_SECONDS)
        try:
            await to_thread.run_sync(backend.refresh_if_due)
        except Exception:
            log.exception("SLO refresh failed; will retry on the next tick")


def create_app(backend: Backend) -> FastAPI:
    """The app over an opened backend (the caller owns the backend's lifetime)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ticker = asyncio.create_task(_tick(backend))
        try:
            yield
        finally:
            backend.begin_shutdown()
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker

    app = FastAPI(
        title="fleetdesk",
        version=__version__,
        summary="Reference backend of the fleetdesk on-call console",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.backend = backend
    app.state.request_metrics = RequestMetrics()
    problems.install(app)
    for router in (
        system.router,
        fleet.router,
        models.router,
        actions.router,
        incidents.router,
        audit.router,
        ingest.router,
        events.router,
        registry.router,
        registry_history.router,
    ):
        app.include_router(
            router
        )  # each router carries its full /v1 prefix, so route templates are whole
    app.include_router(system.probes)
    openapi.install(app, backend.demo)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(
        RequestMetricsMiddleware, metrics=app.state.request_metrics
    )  # outermost: counts refusals too
    return app
