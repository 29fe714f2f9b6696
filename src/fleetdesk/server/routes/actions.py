"""Playbook actions on a model (see fleetdesk.wire for the rules)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header
from fastapi.responses import Response

from fleetdesk.server import actions
from fleetdesk.server.deps import BackendDep, ModelIdPath, PrincipalDep
from fleetdesk.server.idempotency import AfterCommit, request_hash, require_key, run_once
from fleetdesk.server.problems import ProblemDetails
from fleetdesk.server.store import Connection
from fleetdesk.server.views import model_or_404
from fleetdesk.wire import (
    API_PREFIX,
    IDEMPOTENCY_HEADER,
    REPLAYED_HEADER,
    ActionKind,
    ActionRequest,
    ActionResult,
)

router = APIRouter(prefix=f"{API_PREFIX}/models", tags=["actions"])

_ERRORS = {status: {"model": ProblemDetails} for status in (400, 401, 403, 404, 409, 422)}


@router.post("/{model_id}/actions/{kind}", response_model=ActionResult, responses=_ERRORS)
def act(
    model_id: ModelIdPath,
    kind: ActionKind,
    body: ActionRequest,
    backend: BackendDep,
    principal: PrincipalDep,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_HEADER)] = None,
) -> Response:
    model = model_or_404(backend, model_id)
    actions.check_permission(principal, model, kind)
    key = require_key(
        idempotency_key
    )  # every write carries one, as the document says, dry runs included
    if body.dry_run:
        # A dry run changes nothing, so it claims no key: the same one can then carry the action.
        with backend.store.read() as conn:
            plan = actions.plan_action(conn, backend, model, kind, body, principal)
        result = actions.result_of(plan, True, backend.clock.now())
        return Response(result.model_dump_json(), media_type="application/json")
    fingerprint = request_hash(
        "POST", f"/v1/models/{model_id}/actions/{kind.value}", body.model_dump(mode="json")
    )

    def work(conn: Connection) -> tuple[int, str, AfterCommit | None]:
        plan = actions.plan_action(conn, backend, model, kind, body, principal)
        result = actions.apply(conn, backend, plan, body, principal, key, backend.clock.now())
        if not result.pages:
            return 200, result.model_dump_json(), None

        def deliver() -> None:
            actions.deliver_pages(backend, result)

        return 200, result.model_dump_json(), deliver

    outcome = run_once(backend, principal.user, key, fingerprint, work)
    headers = {REPLAYED_HEADER: "true"} if outcome.replayed else {}
    return Response(
        outcome.body, status_code=outcome.status, media_type="application/json", headers=headers
    )
