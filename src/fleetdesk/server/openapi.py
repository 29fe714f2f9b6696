"""The OpenAPI document as the server behaves: bearer auth, and every error each route can answer, as
problem+json.

FastAPI documents what a route declares. What the parts around every route answer it cannot see: 401 from
auth, 404 for an id that is not there, 413 and 408 from the body limit, 503 and 507 from the store, 500 from
the last-resort handler. So the document is completed here, once, from what each route shares (its method,
path parameters, inputs), and its errors all point at ProblemDetails under application/problem+json.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from fleetdesk.server.idempotency import KEY_PATTERN
from fleetdesk.wire import API_PREFIX, IDEMPOTENCY_HEADER, PROBLEM_CONTENT_TYPE

SCHEME = "bearer"
PROBLEM = {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}}
UNSECURED = {f"{API_PREFIX}/openapi.json", f"{API_PREFIX}/docs"}
NO_DATABASE = {"/healthz"}

ALWAYS = {
    500: "The server failed; nothing internal is said (problem type internal)",
    503: "The database is busy (another process holds it) or the server is not ready; retry shortly",
    # The body limit stands below routing: a body on a route that takes none is still refused past it.
    413: "The request body is larger than this route takes",
}
SECURED = {401: "No bearer token, or one that is unknown, revoked or expired"}
WITH_PATH_ID = {404: "No such model or incident (a model's problem lists close ids as suggestions)"}
WITH_INPUT = {422: "A parameter or the body is invalid; errors lists each one"}
WRITES = {
    400: f"The {IDEMPOTENCY_HEADER} header is missing or malformed",
    403: "The token's role or team may not do this; missing_permission names what it lacks",
    408: "The request body did not arrive in time",
    409: "The world moved (stale state, already acknowledged, bucket conflict, clock) or the same"
    f" {IDEMPOTENCY_HEADER} is still being processed",
    422: f"A parameter or the body is invalid (errors lists each), a rule refuses the action, or the"
    f" {IDEMPOTENCY_HEADER} was used for another request",
    507: "The server's disk is full: nothing was changed; send the same request again later",
}
BY_ROUTE = {
    f"{API_PREFIX}/models/{{model_id}}/stability": {
        502: "The metrics source (Prometheus) failed the query"
    },
    "/readyz": {503: "Not ready: the database does not answer or its disk is full"},
    f"{API_PREFIX}/registry": {404: "No such registry version"},
    f"{API_PREFIX}/registry/diff": {404: "No such registry version"},
}


def install(app: FastAPI, demo: bool) -> None:
    """Serve the completed document at the app's openapi_url."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(FastAPI.openapi(app), demo)
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def complete(schema: dict[str, Any], demo: bool) -> dict[str, Any]:
    """``schema`` (FastAPI's document) with security and every route's error responses filled in."""
    components = schema.setdefault("components", {})
    components["securitySchemes"] = {
        SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `fleetdesk token create`, sent as `Authorization: Bearer <token>`",
        }
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            secured = path.startswith(API_PREFIX) and path not in UNSECURED
            # A demo server (loopback only) reads without a token; it still refuses every write without one.
            anonymous_ok = not secured or (demo and method == "get")
            operation["security"] = (
                [{SCHEME: []}, *([{}] if anonymous_ok else [])] if secured else []
            )
            _require_idempotency_key(operation, method)
            statuses = {**ALWAYS, **(SECURED if secured else {}), **BY_ROUTE.get(path, {})}
            if path in NO_DATABASE:
                del statuses[503]
            parameters = operation.get("parameters", [])
            if any(parameter["in"] == "path" for parameter in parameters):
                statuses.update(WITH_PATH_ID)
            if parameters or "requestBody" in operation:
                statuses.update(WITH_INPUT)
            if method in ("post", "put"):
                statuses.update(WRITES)
            responses = operation.setdefault("responses", {})
            for status in [
                status for status in responses if status.isdigit() and int(status) >= 400
            ]:
                del responses[
                    status
                ]  # FastAPI's guesses (a 422 for a route with no inputs) and its 422 body
            for status, description in sorted(statuses.items()):
                responses[str(status)] = {"description": description, "content": PROBLEM}
    # FastAPI's own 422 body is not what this server sends: the schemas that described it go.
    for unused in ("HTTPValidationError", "ValidationError"):
        components.get("schemas", {}).pop(unused, None)
    return schema


def _require_idempotency_key(operation: dict[str, Any], method: str) -> None:
    """The key is required on every write (the route answers 400 without it, rather than FastAPI's 422)."""
    for parameter in operation.get("parameters", []):
        if (
            parameter["in"] == "header"
            and parameter["name"] == IDEMPOTENCY_HEADER
            and method in ("post", "put")
        ):
            parameter["required"] = True
            parameter["schema"] = {
                "type": "string",
                "pattern": KEY_PATTERN,
                "minLength": 1,
                "maxLength": 200,
            }
            parameter["description"] = (
                "A fresh random value per intent, sent again unchanged on its retries;"
                " a dry run claims none, so its key can then be used for the action"
            )
