"""Registry changes: create, update and retire models and type records, apply a fleet file (reads of the
registry and its history are in registry_history)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Header
from fastapi.responses import Response
from pydantic import BaseModel

from fleetdesk.domain.registry import Model
from fleetdesk.domain.registry_change import declared
from fleetdesk.server import registry_changes
from fleetdesk.server.auth import Principal
from fleetdesk.server.backend import Backend
from fleetdesk.server.deps import BackendDep, ModelIdPath, PrincipalDep
from fleetdesk.server.idempotency import request_hash, require_key, run_once
from fleetdesk.server.problems import Problem, ProblemDetails
from fleetdesk.server.registry_changes import Records, Wanted
from fleetdesk.server.store import Connection
from fleetdesk.wire import (
    API_PREFIX,
    IDEMPOTENCY_HEADER,
    REPLAYED_HEADER,
    ModelRetire,
    ModelWrite,
    ProblemType,
    RegistryApply,
    RegistryChangeResult,
    TypeWrite,
)

router = APIRouter(prefix=f"{API_PREFIX}/registry", tags=["registry"])

_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ProblemDetails} for status in (400, 401, 403, 404, 409, 422)
}

KeyHeader = Annotated[str | None, Header(alias=IDEMPOTENCY_HEADER)]


@router.post("/models", response_model=RegistryChangeResult, responses=_WRITE_ERRORS)
def create_model(
    body: ModelWrite,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Register a new model (409 when its id is taken: change it with PUT)."""
    model = body.model

    def wanted(current: Records) -> Records:
        if model.id in current.models:
            raise Problem(
                409,
                ProblemType.MODEL_EXISTS,
                f"model {model.id!r} exists already; change it with PUT /v1/registry/models/{{id}}",
                title="Model exists",
            )
        return replace(current, models={**current.models, model.id: model})

    return _change(backend, principal, idempotency_key, "POST", "/models", body, wanted)


@router.put("/models/{model_id}", response_model=RegistryChangeResult, responses=_WRITE_ERRORS)
def update_model(
    model_id: ModelIdPath,
    body: ModelWrite,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Replace a model's record (a model's id never changes: retire it and create another)."""
    model = body.model
    if model.id != model_id:
        raise registry_changes.refused(
            [registry_changes.violation(model_id, "id", f"the body names {model.id!r}")]
        )

    def wanted(current: Records) -> Records:
        _known(current.models, model_id)
        return replace(current, models={**current.models, model_id: model})

    return _change(backend, principal, idempotency_key, "PUT", f"/models/{model_id}", body, wanted)


@router.post(
    "/models/{model_id}/retire", response_model=RegistryChangeResult, responses=_WRITE_ERRORS
)
def retire_model(
    model_id: ModelIdPath,
    body: ModelRetire,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Take a model out of the registry (refused while another model still refers to it)."""

    def wanted(current: Records) -> Records:
        _known(current.models, model_id)
        models = {m: record for m, record in current.models.items() if m != model_id}
        return replace(current, models=models)

    return _change(
        backend, principal, idempotency_key, "POST", f"/models/{model_id}/retire", body, wanted
    )


@router.put("/types/{type_string}", response_model=RegistryChangeResult, responses=_WRITE_ERRORS)
def put_type(
    type_string: ModelIdPath,
    body: TypeWrite,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Create or replace a model type's record; its models' attributes are checked against it."""

    def wanted(current: Records) -> Records:
        return replace(current, types={**current.types, type_string: body.record})

    return _change(
        backend, principal, idempotency_key, "PUT", f"/types/{type_string}", body, wanted
    )


@router.post(
    "/types/{type_string}/retire", response_model=RegistryChangeResult, responses=_WRITE_ERRORS
)
def retire_type(
    type_string: ModelIdPath,
    body: ModelRetire,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Remove a type's record (refused while a model of the type carries an attribute only it declares)."""

    def wanted(current: Records) -> Records:
        if type_string not in current.types:
            raise Problem(
                404,
                ProblemType.NOT_FOUND,
                f"no record of type {type_string!r}",
                title="Unknown type",
            )
        types = {t: record for t, record in current.types.items() if t != type_string}
        return replace(current, types=types)

    return _change(
        backend, principal, idempotency_key, "POST", f"/types/{type_string}/retire", body, wanted
    )


@router.post("/apply", response_model=RegistryChangeResult, responses=_WRITE_ERRORS)
def apply_models(
    body: RegistryApply,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: KeyHeader = None,
) -> Response:
    """Make the registry say what these records say, all of it or nothing (``prune``: retire the rest of the
    declared teams' models). Type records given replace the current ones; the others stay."""
    twice = sorted(
        m for m, count in Counter(model.id for model in body.models).items() if count > 1
    )
    if twice:
        raise registry_changes.refused(
            [registry_changes.violation(m, "id", "declared more than once") for m in twice]
        )

    def wanted(current: Records) -> Records:
        return Records(
            models=declared(current.models, body.models, body.prune),
            types={**current.types, **body.types},
        )

    return _change(backend, principal, idempotency_key, "POST", "/apply", body, wanted)


def _change(
    backend: Backend,
    principal: Principal,
    idempotency_key: str | None,
    method: str,
    path: str,
    body: ModelWrite | ModelRetire | TypeWrite | RegistryApply,
    wanted: Wanted,
) -> Response:
    """The one write path: plan against the registry in the store, apply once per idempotency key."""
    key = require_key(idempotency_key)
    if body.dry_run:
        # A dry run changes nothing, so it claims no key (as for actions).
        at = backend.clock.now()
        with backend.store.read() as conn:
            planned = registry_changes.plan(conn, backend, wanted, principal, at)
        result = RegistryChangeResult(
            dry_run=True,
            at=at,
            version=None,
            changes=planned.changes,
            type_changes=planned.type_changes,
        )
        return _json(result)
    fingerprint = request_hash(method, f"{API_PREFIX}/registry{path}", body.model_dump(mode="json"))

    def work(conn: Connection) -> tuple[int, str, None]:
        at = backend.clock.now()
        planned = registry_changes.plan(conn, backend, wanted, principal, at)
        result = registry_changes.apply(conn, backend, planned, principal, body.reason, key, at)
        return 200, result.model_dump_json(), None

    outcome = run_once(backend, principal.user, key, fingerprint, work)
    headers = {REPLAYED_HEADER: "true"} if outcome.replayed else {}
    return Response(
        outcome.body, status_code=outcome.status, media_type="application/json", headers=headers
    )


def _known(current: Mapping[str, Model], model_id: str) -> None:
    if model_id not in current:
        raise Problem(404, ProblemType.NOT_FOUND, f"no model {model_id!r}", title="Unknown model")


def _json(body: BaseModel) -> Response:
    return Response(body.model_dump_json(), media_type="application/json")
