"""Each problem type the server can send becomes the matching typed error with a plain message."""

from __future__ import annotations

import json

import pytest

from fleetdesk.client import (
    AlreadyAcknowledged,
    BadRequest,
    BadResponse,
    Conflict,
    FleetdeskError,
    Forbidden,
    IdempotencyConflict,
    NotFound,
    RuleViolation,
    ServerError,
    StaleState,
    Unauthorized,
    Unavailable,
    UnhealthyTarget,
)
from fleetdesk.client._problems import error_from_problem
from fleetdesk.wire import ProblemType

CASES: list[tuple[ProblemType, int, type[FleetdeskError]]] = [
    (ProblemType.BAD_REQUEST, 400, BadRequest),
    (ProblemType.IDEMPOTENCY_KEY_MISSING, 400, BadRequest),
    (ProblemType.UNAUTHENTICATED, 401, Unauthorized),
    (ProblemType.FORBIDDEN, 403, Forbidden),
    (ProblemType.NOT_FOUND, 404, NotFound),
    (ProblemType.METHOD_NOT_ALLOWED, 405, BadRequest),
    (ProblemType.REQUEST_TIMEOUT, 408, BadRequest),
    (ProblemType.PAYLOAD_TOO_LARGE, 413, BadRequest),
    (ProblemType.STALE_STATE, 409, StaleState),
    (ProblemType.IDEMPOTENCY_KEY_IN_PROGRESS, 409, IdempotencyConflict),
    (ProblemType.ALREADY_ACKNOWLEDGED, 409, AlreadyAcknowledged),
    (ProblemType.BUCKET_CONFLICT, 409, Conflict),
    (ProblemType.CLOCK, 409, Conflict),
    (ProblemType.MODEL_EXISTS, 409, Conflict),
    (ProblemType.REGISTRY_INVALID, 422, RuleViolation),
    (ProblemType.VALIDATION, 422, BadRequest),
    (ProblemType.ACTION_NOT_ALLOWED, 422, RuleViolation),
    (ProblemType.TARGET_UNHEALTHY, 409, UnhealthyTarget),
    (ProblemType.HOLDOUT_OVERRIDE_REQUIRED, 422, RuleViolation),
    (ProblemType.IDEMPOTENCY_KEY_REUSED, 422, IdempotencyConflict),
    (ProblemType.UNAVAILABLE, 503, Unavailable),
    (ProblemType.STORAGE_FULL, 507, Unavailable),
    (ProblemType.METRICS_SOURCE, 502, ServerError),
    (ProblemType.INTERNAL, 500, ServerError),
]


def test_every_problem_type_is_covered() -> None:
    assert {kind for kind, _, _ in CASES} == set(ProblemType)


@pytest.mark.parametrize(("kind", "status", "error_type"), CASES)
def test_problem_type_maps_to_its_error(
    kind: ProblemType, status: int, error_type: type[FleetdeskError]
) -> None:
    body = json.dumps(
        {"type": kind.value, "title": "T", "status": status, "detail": "said \u202eevil\x07"}
    )
    error = error_from_problem("rollback of m", status, body)
    assert type(error) is error_type
    assert error.status == status and error.problem is not None and error.problem.type == kind.value
    assert "said \\u202eevil\\x07" in error.message  # shown, never interpreted


def test_validation_errors_are_listed() -> None:
    body = json.dumps(
        {
            "type": ProblemType.VALIDATION.value,
            "title": "Invalid",
            "status": 422,
            "detail": "bad",
            "errors": [{"loc": ["body", "reason"], "message": "needs a reason"}],
        }
    )
    assert "body.reason: needs a reason" in error_from_problem("x", 422, body).message


def test_not_a_problem_body() -> None:
    assert isinstance(error_from_problem("x", 418, None), BadResponse)
    assert isinstance(error_from_problem("x", 502, None), ServerError)
    assert isinstance(error_from_problem("x", 400, '{"no": "problem"}'), BadResponse)
