"""Failures and results in plain words for an engineer at 2am."""

from __future__ import annotations

from fleetdesk.client import (
    AlreadyAcknowledged,
    FleetdeskError,
    Forbidden,
    NotConfirmed,
    RuleViolation,
    StaleState,
    Unauthorized,
    Unavailable,
    UnhealthyTarget,
)
from fleetdesk.domain.text import sanitize
from fleetdesk.wire import ActionResult, LiveState


def live_state_words(state: LiveState) -> str:
    flags = [
        f"serving {sanitize(state.serving_model_id)}",
        f"traffic {state.traffic_share:.0%}",
        f"phase {state.launch_phase}",
    ]
    if state.launch_halted:
        flags.append("launch halted")
    if state.experiment_ended:
        flags.append("experiment ended")
    return ", ".join(flags)


def explain(error: BaseException, what: str = "") -> tuple[str, str]:
    """(title, message) for a failure; the message says what happened and what to do."""
    prefix = f"{what}: " if what else ""
    if isinstance(error, StaleState):
        try:
            now = (
                live_state_words(LiveState.model_validate(error.current))
                if error.current
                else "unknown"
            )
        except ValueError:
            now = "unknown"
        return (
            "stale state (409)",
            f"{prefix}nothing was done: the model changed since you looked; it is now {now}. "
            "Look again, then decide.",
        )
    if isinstance(error, UnhealthyTarget):
        return (
            "target unhealthy (409)",
            f"{prefix}nothing was done: {error.message}. Escalate instead, or act again and acknowledge it.",
        )
    if isinstance(error, AlreadyAcknowledged):
        return "already acknowledged (409)", f"{prefix}{error.message}"
    if isinstance(error, Forbidden):
        missing = error.missing_permission or "unknown"
        return (
            "not allowed (403)",
            f"{prefix}nothing was done: your token lacks the permission '{missing}'.",
        )
    if isinstance(error, NotConfirmed):
        return (
            "not confirmed",
            f"{prefix}not confirmed: check audit log before retrying "
            "(retrying reuses the same idempotency key, so it cannot run twice).",
        )
    if isinstance(error, RuleViolation):
        suggestion = error.problem.suggested_action if error.problem else None
        also = f" Instead: {sanitize(str(suggestion))}." if suggestion else ""
        return "not allowed by the rules (422)", f"{prefix}{error.message}.{also}"
    if isinstance(error, Unauthorized):
        return "not signed in (401)", f"{prefix}{error.message}"
    if isinstance(error, Unavailable):
        return "server unreachable", f"{prefix}{error.message}"
    if isinstance(error, FleetdeskError):
        return type(error).__name__, f"{prefix}{error.message}"
    return "console error", sanitize(f"{prefix}{type(error).__name__}: {error}", limit=500)


def result_words(result: ActionResult) -> str:
    """A finished action's summary with traffic and pages, one line."""
    parts = [sanitize(result.summary)]
    if result.traffic_moved:
        to = f" to {sanitize(result.traffic_to)}" if result.traffic_to else ""
        parts.append(f"moved {result.traffic_moved:.0%} of traffic{to}")
    if result.pages:
        parts.append("paged " + ", ".join(sanitize(p.team) for p in result.pages))
    return "; ".join(parts)
