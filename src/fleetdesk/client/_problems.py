"""RFC 9457 problem details from the server, turned into typed client errors."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from fleetdesk.client._errors import (
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
from fleetdesk.wire import ProblemDetails, ProblemType


def error_from_problem(label: str, status: int, body: str | None) -> FleetdeskError:
    """The error an unsuccessful response stands for; ``body`` is its JSON text, None if not JSON."""
    problem = _parse(body)
    if problem is None:
        if status >= 500:
            return ServerError(
                f"{label}: the server failed (HTTP {status}, no problem details)", status=status
            )
        return BadResponse(
            f"{label}: HTTP {status} without problem details; is the address a fleetdesk server?",
            status=status,
        )
    kind, said = problem.type, problem.detail or problem.title
    common: dict[str, Any] = {"status": status, "problem": problem}
    if status == 401:
        return Unauthorized(f"not signed in: the server refused the token ({said})", **common)
    if status == 403:
        needs = (
            f" (missing permission: {problem.missing_permission})"
            if problem.missing_permission
            else ""
        )
        return Forbidden(
            f"not allowed: {said}{needs}", missing_permission=problem.missing_permission, **common
        )
    if status == 404:
        hint = f"; did you mean: {', '.join(problem.suggestions)}?" if problem.suggestions else ""
        return NotFound(f"{label}: not found ({said}){hint}", **common)
    if kind == ProblemType.IDEMPOTENCY_KEY_IN_PROGRESS:
        return IdempotencyConflict(
            f"{label}: the same action is still in progress ({said})", in_progress=True, **common
        )
    if kind == ProblemType.IDEMPOTENCY_KEY_REUSED:
        return IdempotencyConflict(
            f"{label}: this action's idempotency key was already used for a different request ({said})",
            in_progress=False,
            **common,
        )
    if kind == ProblemType.STALE_STATE:
        now = f"; now serving {problem.current.serving_model_id}" if problem.current else ""
        return StaleState(
            f"{label}: the state changed since you looked ({said}){now}",
            current=problem.current,
            **common,
        )
    if kind == ProblemType.ALREADY_ACKNOWLEDGED:
        by = problem.incident.acknowledged_by if problem.incident else None
        return AlreadyAcknowledged(
            f"{label}: already acknowledged{f' by {by}' if by else ''} ({said})",
            incident=problem.incident,
            **common,
        )
    if kind == ProblemType.TARGET_UNHEALTHY:
        return UnhealthyTarget(
            f"{label}: not done: {said}", target_health=problem.target_health, **common
        )
    if status == 409:
        return Conflict(f"{label}: conflict ({said})", **common)
    if kind == ProblemType.REGISTRY_INVALID:
        return RuleViolation(f"{label}: refused ({said}): {_fields(problem)}", **common)
    if kind in (ProblemType.ACTION_NOT_ALLOWED, ProblemType.HOLDOUT_OVERRIDE_REQUIRED):
        instead = f"; instead: {problem.suggested_action}" if problem.suggested_action else ""
        return RuleViolation(f"{label}: not allowed by the rules ({said}){instead}", **common)
    if kind == ProblemType.UNAVAILABLE:
        return Unavailable(f"{label}: the server is not ready ({said})", **common)
    if kind == ProblemType.STORAGE_FULL:
        return Unavailable(f"{label}: not done, the server's disk is full ({said})", **common)
    if status >= 500:
        return ServerError(f"{label}: the server failed ({said})", **common)
    if problem.errors:
        said = f"{said}: {_fields(problem)}"
    return BadRequest(f"{label}: rejected ({said})", **common)


def _fields(problem: ProblemDetails) -> str:
    """The first few invalid inputs in one line (all of them are in ``problem.errors``)."""
    errors = problem.errors or []
    shown = "; ".join(f"{'.'.join(str(p) for p in e.loc)}: {e.message}" for e in errors[:3])
    return shown + (f" and {len(errors) - 3} more" if len(errors) > 3 else "")


def _parse(body: str | None) -> ProblemDetails | None:
    if body is None:
        return None
    try:
        return ProblemDetails.model_validate_json(body)
    except ValidationError:
        return None
