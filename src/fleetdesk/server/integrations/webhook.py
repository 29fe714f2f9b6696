"""A generic outbound JSON webhook for paging systems other than Alertmanager, signed with HMAC-SHA256.

Each request carries:
- ``X-Fleetdesk-Timestamp``: Unix seconds when it was signed (receivers should
  refuse ones older than a few minutes, against replays);
- ``X-Fleetdesk-Signature``: ``sha256=`` + hex HMAC-SHA256 over
  ``"{timestamp}.{body}"`` with the shared secret (``verify_signature`` does
  the receiver's side);
- ``X-Fleetdesk-Delivery``: the outbox delivery id, the same on every retry, so
  receivers can drop duplicates.
The body is a ``WebhookEvent``.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from datetime import datetime
from typing import Any, Literal

import httpx
from pydantic import AwareDatetime, BaseModel, ConfigDict, SecretBytes

from fleetdesk.domain.registry import Model, Tier
from fleetdesk.domain.text import sanitize
from fleetdesk.server.integrations.outbound import OutboundPagingTarget
from fleetdesk.server.integrations.outbox import DeliveryFailed, OutboxEntry, RetryBackoff, post
from fleetdesk.server.integrations.prometheus_rules import DEFAULT_SERVER_URL, console_command
from fleetdesk.server.integrations.urls import public_url
from fleetdesk.wire import EscalationTarget, Page

TIMESTAMP_HEADER = "X-Fleetdesk-Timestamp"
SIGNATURE_HEADER = "X-Fleetdesk-Signature"
DELIVERY_HEADER = "X-Fleetdesk-Delivery"
MAX_SKEW_SECONDS = 300


class WebhookEvent(BaseModel):
    """The JSON body of every webhook request."""

    model_config = ConfigDict(frozen=True)

    event: Literal["page", "resolve"]
    at: AwareDatetime
    model_id: str
    model_type: str
    tier: Tier
    team: str
    rotation: str
    target: EscalationTarget
    reason: str
    incident_id: int | None
    purpose: str
    console: str


def signature(secret: bytes, timestamp: str, body: bytes) -> str:
    """The ``X-Fleetdesk-Signature`` value for this timestamp and body."""
    digest = hmac.new(secret, timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(
    secret: bytes, timestamp: str, body: bytes, received: str, now: float | None = None
) -> bool:
    """True when ``received`` signs this body and timestamp, and the timestamp is recent (receiver side)."""
    try:
        age = abs((time.time() if now is None else now) - int(timestamp))
    except ValueError:
        return False
    return age <= MAX_SKEW_SECONDS and hmac.compare_digest(
        signature(secret, timestamp, body), received
    )


class WebhookTarget(OutboundPagingTarget):
    """POSTs signed ``WebhookEvent`` JSON to one URL, through the durable outbox."""

    name = "webhook"

    def __init__(
        self,
        url: str,
        secret: bytes,
        server_url: str = DEFAULT_SERVER_URL,
        timeout: float = 5.0,
        backoff: RetryBackoff | None = None,
        sweep_interval: float = 2.0,
    ) -> None:
        if not secret:
            raise ValueError("a webhook needs a non-empty signing secret")
        super().__init__(server_url, backoff, sweep_interval)
        self.url = url
        self._secret = SecretBytes(secret)
        self._http = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 2.0)))

    def __repr__(self) -> str:
        return f"WebhookTarget(url={public_url(self.url)!r})"

    @property
    def where(self) -> str:
        return f"the webhook at {public_url(self.url)}"

    def page_payload(self, page: Page, model: Model, sent_at: datetime) -> Any:
        return WebhookEvent(
            event="page",
            at=sent_at,
            model_id=model.id,
            model_type=model.type,
            tier=model.tier,
            team=page.team,
            rotation=page.rotation,
            target=page.target,
            reason=page.reason,
            incident_id=page.incident_id,
            purpose=model.purpose,
            console=console_command(self.server_url, model.id),
        ).model_dump(mode="json")

    def resolve_payload(self, page_payload: Any, resolved_at: datetime) -> Any:
        page = WebhookEvent.model_validate(page_payload)
        return page.model_copy(update={"event": "resolve", "at": resolved_at}).model_dump(
            mode="json"
        )

    def send(self, entry: OutboxEntry) -> None:
        body = WebhookEvent.model_validate(entry.payload).model_dump_json().encode()
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            DELIVERY_HEADER: str(entry.id),
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: signature(self._secret.get_secret_value(), timestamp, body),
        }
        response = post(self._http, self.url, content=body, headers=headers)
        if not response.is_success:
            raise DeliveryFailed(sanitize(f"HTTP {response.status_code}", limit=100))

    def close(self) -> None:
        super().close()
        self._http.close()
