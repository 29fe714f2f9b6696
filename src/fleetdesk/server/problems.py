"""RFC 9457 problem responses: the one error shape of the API, and the handlers that enforce it."""

from __future__ import annotations

import logging
import sqlite3
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fleetdesk.domain.text import sanitize
from fleetdesk.server.storage import DiskFull
from fleetdesk.server.store import StoreUnavailable
from fleetdesk.wire import PROBLEM_CONTENT_TYPE, FieldError, ProblemDetails, ProblemType

log = logging.getLogger("fleetdesk.server")

MAX_LISTED = 100
"""Most items a problem lists (errors, conflicts): a 16 MiB batch of bad buckets has hundreds of thousands, and
listing them all made a 7.5 MB request a 40 MB answer, past what the client reads. The count is in the detail."""

_TYPE_BY_STATUS = {
    400: ProblemType.BAD_REQUEST,
    401: ProblemType.UNAUTHENTICATED,
    403: ProblemType.FORBIDDEN,
    404: ProblemType.NOT_FOUND,
    405: ProblemType.METHOD_NOT_ALLOWED,
    408: ProblemType.REQUEST_TIMEOUT,
    413: ProblemType.PAYLOAD_TOO_LARGE,
    422: ProblemType.VALIDATION,
    503: ProblemType.UNAVAILABLE,
}


class Problem(Exception):
    """Raise anywhere in a request to answer with this problem."""

    def __init__(
        self,
        status: int,
        type_: ProblemType,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        self.details = ProblemDetails(
            type=type_.value,
            title=title or HTTPStatus(status).phrase,
            status=status,
            detail=detail,
            **extensions,
        )
        self.headers = headers or {}
        super().__init__(detail)


def problem_response(
    details: ProblemDetails, instance: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    if instance is not None and details.instance is None:
        details = details.model_copy(update={"instance": instance})
    return JSONResponse(
        details.model_dump(mode="json", exclude_none=True),
        status_code=details.status,
        media_type=PROBLEM_CONTENT_TYPE,
        headers=headers,
    )


def _disk_full(request: Request) -> JSONResponse:
    # The write transaction was rolled back (Store.write) or never began (DiskFull): nothing changed and the
    # key was not claimed, so the same intent can be sent again once space is freed. /readyz says not ready.
    log.error(
        "database disk full on %s %s: the write was not made",
        request.method,
        sanitize(request.url.path),
    )
    details = ProblemDetails(
        type=ProblemType.STORAGE_FULL.value,
        title="Insufficient Storage",
        status=507,
        detail="the server's disk is full: nothing was changed; send the same request again"
        " (same Idempotency-Key) once space is freed",
    )
    return problem_response(details, request.url.path, {"Retry-After": "60"})


def _retry(request: Request) -> str:
    """How to try again: a change with the key it was sent with (it was not made, or was stored with its key)."""
    if request.method in ("GET", "HEAD"):
        return "retry shortly"
    return "retry shortly with the same Idempotency-Key"


def install(app: FastAPI) -> None:
    """Make every error, including unexpected ones, a problem+json without internals."""

    @app.exception_handler(Problem)
    async def _problem(request: Request, error: Problem) -> JSONResponse:
        return problem_response(error.details, request.url.path, error.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, error: StarletteHTTPException) -> JSONResponse:
        status = error.status_code
        problem_type = _TYPE_BY_STATUS.get(
            status, ProblemType.BAD_REQUEST if status < 500 else ProblemType.INTERNAL
        )
        detail = error.detail if isinstance(error.detail, str) else HTTPStatus(status).phrase
        if status == 404 and detail == "Not Found":
            detail = f"no such resource: {request.url.path}"
        details = ProblemDetails(
            type=problem_type.value, title=HTTPStatus(status).phrase, status=status, detail=detail
        )
        headers = dict(error.headers or {})
        if status == 405:
            headers["Allow"] = _allowed(request)
        return problem_response(details, request.url.path, headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, error: RequestValidationError) -> JSONResponse:
        errors = [
            FieldError(
                loc=[part for part in item.get("loc", ()) if isinstance(part, str | int)],
                message=str(item.get("msg", "invalid")),
            )
            for item in error.errors()
        ]
        summary = "; ".join(f"{'.'.join(map(str, e.loc))}: {e.message}" for e in errors[:5])
        if len(errors) > MAX_LISTED:
            summary = f"{len(errors)} invalid inputs, the first {MAX_LISTED} listed: {summary}"
        details = ProblemDetails(
            type=ProblemType.VALIDATION.value,
            title="Invalid request",
            status=422,
            detail=summary or "invalid request",
            errors=errors[:MAX_LISTED],
        )
        return problem_response(details, request.url.path)

    @app.exception_handler(DiskFull)
    async def _still_full(request: Request, error: DiskFull) -> JSONResponse:
        return _disk_full(request)

    @app.exception_handler(sqlite3.OperationalError)
    async def _store_busy(request: Request, error: sqlite3.OperationalError) -> JSONResponse:
        if getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL:
            storage = request.app.state.backend.storage
            if storage is not None:
                storage.write_found_disk_full()
            return _disk_full(request)
        # Another process (a backup, `fleetdesk token create`) held the write lock past busy_timeout. A change
        # is either not made or already stored with its key, so retrying the same intent is safe either way.
        if "locked" not in str(error) and "busy" not in str(error):
            return await _unexpected(request, error)
        log.warning("database busy on %s %s", request.method, sanitize(request.url.path))
        details = ProblemDetails(
            type=ProblemType.UNAVAILABLE.value,
            title="Service Unavailable",
            status=503,
            detail=f"the database is busy (locked by another process); {_retry(request)}",
        )
        return problem_response(details, request.url.path, {"Retry-After": "2"})

    @app.exception_handler(StoreUnavailable)
    async def _store_unavailable(request: Request, error: StoreUnavailable) -> JSONResponse:
        # The PostgreSQL server is down or restarting: the change either did not commit or committed with its
        # Idempotency-Key, so retrying the same intent is safe either way.
        log.warning(
            "database unavailable on %s %s: %s", request.method, sanitize(request.url.path), error
        )
        details = ProblemDetails(
            type=ProblemType.UNAVAILABLE.value,
            title="Service Unavailable",
            status=503,
            detail=f"the database cannot be reached; {_retry(request)}",
        )
        return problem_response(details, request.url.path, {"Retry-After": "2"})

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, error: Exception) -> JSONResponse:
        # The traceback goes to the server log only; the client learns nothing internal.
        log.error(
            "unhandled error on %s %s: %s",
            request.method,
            sanitize(request.url.path),
            type(error).__name__,
            exc_info=error,
        )
        details = ProblemDetails(
            type=ProblemType.INTERNAL.value,
            title="Internal Server Error",
            status=500,
            detail="the server failed to handle this request; it has been logged",
        )
        return problem_response(details, request.url.path)


def _allowed(request: Request) -> str:
    """Every method some route takes at this path: Starlette names only the first route's, and a path may have
    several (GET and PUT of a registry record are two routes)."""
    methods: set[str] = set()
    for route in request.app.routes:
        pattern, taken = getattr(route, "path_regex", None), getattr(route, "methods", None)
        if pattern is not None and taken and pattern.match(request.url.path):
            methods.update(taken)
    return ", ".join(sorted(methods))
