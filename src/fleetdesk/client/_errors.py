"""Every way a call can fail, as typed exceptions with plain-words messages.

Each message is sanitized for a terminal and never contains the token (the
client removes it from anything the server sends back before it gets here).
"""

from __future__ import annotations

from typing import Any

from fleetdesk.domain.text import sanitize
from fleetdesk.wire import Incident, LiveState, ProblemDetails, TargetHealth

MESSAGE_LIMIT = 1000


class FleetdeskError(Exception):
    """Base of all client errors; ``message`` is ready to show on a terminal."""

    def __init__(
        self, message: str, *, status: int | None = None, problem: ProblemDetails | None = None
    ) -> None:
        self.message = sanitize(message, limit=MESSAGE_LIMIT)
        self.status = status
        self.problem = problem
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class TokenError(FleetdeskError):
    """The token could not be loaded (unreadable, malformed, or a file other users can read)."""


class InvalidAddress(FleetdeskError, ValueError):
    """The server address is not an http(s) URL, or carries credentials."""


class BadRequest(FleetdeskError):
    """400 and other 4xx the client cannot act on: the request itself was malformed."""


class Unauthorized(FleetdeskError):
    """401: no token, or one the server does not accept (invalid, revoked, expired)."""


class Forbidden(FleetdeskError):
    """403: the token is valid but lacks a permission."""

    def __init__(
        self, message: str, *, missing_permission: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.missing_permission = sanitize(missing_permission) if missing_permission else None


class NotFound(FleetdeskError):
    """404: no such model, incident or route."""


class Conflict(FleetdeskError):
    """409: the request conflicts with the current state of the server."""


class StaleState(Conflict):
    """409: the world moved since the console looked; ``current`` says what it is now."""

    def __init__(self, message: str, *, current: LiveState | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.current = current


class AlreadyAcknowledged(Conflict):
    """409: someone acknowledged the incident first; ``incident`` is how it stands now."""

    def __init__(self, message: str, *, incident: Incident | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.incident = incident


class UnhealthyTarget(Conflict):
    """409: the baseline the traffic would move to is itself unhealthy and the request did not acknowledge it;
    ``target_health`` says how it stands. Acknowledge it (``acknowledged_target``) or escalate instead."""

    def __init__(
        self, message: str, *, target_health: TargetHealth | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.target_health = target_health


class IdempotencyConflict(Conflict):
    """The idempotency key is in use: still in progress (409) or sent with a different body (422)."""

    def __init__(self, message: str, *, in_progress: bool, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.in_progress = in_progress


class RuleViolation(FleetdeskError):
    """422: the registry rules forbid this action (e.g. rollback of a model with no baseline)."""


class ServerError(FleetdeskError):
    """5xx: the server failed; for an action, whether it happened is in the audit log."""


class Unavailable(FleetdeskError):
    """The server could not be reached or did not answer a read in time."""


class NotConfirmed(FleetdeskError):
    """A change was sent but its outcome is unknown (timeout or dropped connection)."""


class BadResponse(FleetdeskError):
    """The answer is not what a fleetdesk server sends (HTML, garbage, or another schema)."""
