"""The async client for the fleetdesk backend: the console's only way out.

token = load_token()                       # $FLEETDESK_TOKEN or a 0600 file
async with FleetdeskClient(url, token, timeouts=ClientTimeouts()) as client:
    summary = await client.fleet_summary()
    intent = ActionIntent.of(ActionKind.ROLLBACK, model_id, expected_serving_model_id=model_id, reason="NE regression")
    preview = await client.perform(intent.as_dry_run())
    result = await client.perform(intent)  # after NotConfirmed, perform(intent) again: same key
    async for update in client.events():   # EventUpdate | ConnectionUpdate
        ...
"""

import sys

# httpx imports its own command-line tool (click, pygments, rich.syntax) whenever click is installed, and
# uvicorn installs click: ~15 ms of console start-up for a tool the console never runs. A None entry makes
# that import fail, and httpx then defines a stub ``httpx.main`` instead (its documented fallback).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from fleetdesk.client._client import FleetdeskClient, ModelFilters, PageRequest
from fleetdesk.client._errors import (
    AlreadyAcknowledged,
    BadRequest,
    BadResponse,
    Conflict,
    FleetdeskError,
    Forbidden,
    IdempotencyConflict,
    InvalidAddress,
    NotConfirmed,
    NotFound,
    RuleViolation,
    ServerError,
    StaleState,
    TokenError,
    Unauthorized,
    Unavailable,
    UnhealthyTarget,
)
from fleetdesk.client._events import (
    ConnectionState,
    ConnectionUpdate,
    EventFeed,
    EventUpdate,
    Update,
)
from fleetdesk.client._intent import ActionIntent
from fleetdesk.client._policy import ClientTimeouts, EventStreamPolicy, RetryPolicy
from fleetdesk.client._registry_intent import RegistryIntent, RegistryWrite
from fleetdesk.client._token import load_token

__all__ = [
    "RegistryIntent",
    "RegistryWrite",
    "ActionIntent",
    "AlreadyAcknowledged",
    "BadRequest",
    "BadResponse",
    "ClientTimeouts",
    "Conflict",
    "ConnectionState",
    "ConnectionUpdate",
    "EventFeed",
    "EventStreamPolicy",
    "EventUpdate",
    "FleetdeskClient",
    "FleetdeskError",
    "Forbidden",
    "IdempotencyConflict",
    "InvalidAddress",
    "ModelFilters",
    "NotConfirmed",
    "NotFound",
    "PageRequest",
    "RetryPolicy",
    "RuleViolation",
    "ServerError",
    "StaleState",
    "TokenError",
    "Unauthorized",
    "Unavailable",
    "UnhealthyTarget",
    "Update",
    "load_token",
]
