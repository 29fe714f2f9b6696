"""Escalation pages as alerts in the team's Alertmanager (API v2, ``POST /api/v2/alerts``).

Identity: an alert is its label set, so the labels are exactly what makes a
page distinct (alertname, model_id, model_type, tier, team, severity): the
same model escalated to the same team again is the same alert, and
Alertmanager deduplicates the repeats. Everything that varies (reason,
incident, context) goes in annotations. Resolving the incident sends the
same labels with ``endsAt`` now; a page otherwise lasts ``ttl`` (Alertmanager
resolves an alert whose ``endsAt`` passed).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from fleetdesk.domain.registry import Model, Tier
from fleetdesk.domain.text import sanitize
from fleetdesk.server.integrations.outbound import OutboundPagingTarget
from fleetdesk.server.integrations.outbox import DeliveryFailed, OutboxEntry, RetryBackoff, post
from fleetdesk.server.integrations.prometheus_rules import DEFAULT_SERVER_URL, console_command
from fleetdesk.server.integrations.urls import public_url
from fleetdesk.wire import EscalationTarget, Page

ALERT_NAME = "FleetdeskEscalation"

SEVERITY_BY_TIER = {
    Tier.TIER0: "critical",
    Tier.TIER1: "critical",
    Tier.TIER2: "warning",
    Tier.TIER3: "warning",
    Tier.TIER4: "info",
}
"""The ``severity`` label: TIER0/TIER1 page as critical, TIER2/TIER3 as warning, TIER4 as info."""


class PostableAlert(BaseModel):
    """One alert as Alertmanager's v2 API takes it."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: AwareDatetime = Field(alias="startsAt")
    ends_at: AwareDatetime = Field(alias="endsAt")
    generator_url: str | None = Field(default=None, alias="generatorURL")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def alert_labels(page: Page, model: Model) -> dict[str, str]:
    """The alert's identity (see the module docstring)."""
    return {
        "alertname": ALERT_NAME,
        "model_id": model.id,
        "model_type": model.type,
        "tier": model.tier.value,
        "team": page.team,
        "severity": SEVERITY_BY_TIER[model.tier],
    }


def escalation_alert(
    page: Page, model: Model, starts_at: datetime, ttl: timedelta, server_url: str
) -> PostableAlert:
    """The alert announcing one escalation page."""
    who = (
        "the owning team"
        if page.target is EscalationTarget.OWNER
        else f"the team of an upstream model of {model.id}"
    )
    fallback = f"baseline {model.baseline_model_id}" if model.baseline_model_id else "no baseline"
    return PostableAlert(
        labels=alert_labels(page, model),
        annotations={
            "summary": sanitize(
                f"{model.id} ({model.tier}) escalated to {page.team}: {page.reason}", limit=500
            ),
            "context": sanitize(
                f"{model.id} is a {model.role} {model.type} model ({model.tier}, owner {model.owner_team},"
                f" {fallback}): {model.purpose}",
                limit=1000,
            ),
            "reason": sanitize(page.reason, limit=2000),
            "escalated_to": sanitize(f"{page.team} ({page.rotation}), {who}"),
            "incident": "" if page.incident_id is None else str(page.incident_id),
            "console": console_command(server_url, model.id),
        },
        starts_at=starts_at,
        ends_at=starts_at + ttl,
        # Alertmanager links this as the alert's source: the model in fleetdesk's API.
        generator_url=f"{server_url}/v1/models/{quote(model.id, safe='')}",
    )


class AlertmanagerTarget(OutboundPagingTarget):
    """Posts escalation pages to Alertmanager, through the durable outbox."""

    name = "alertmanager"

    def __init__(
        self,
        url: str,
        server_url: str = DEFAULT_SERVER_URL,
        ttl: timedelta = timedelta(hours=24),
        timeout: float = 5.0,
        backoff: RetryBackoff | None = None,
        sweep_interval: float = 2.0,
    ) -> None:
        super().__init__(server_url, backoff, sweep_interval)
        self.url = url.rstrip("/")
        self.ttl = ttl
        self._http = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 2.0)))

    @property
    def where(self) -> str:
        return f"Alertmanager at {public_url(self.url)}"

    def page_payload(self, page: Page, model: Model, sent_at: datetime) -> Any:
        return [escalation_alert(page, model, sent_at, self.ttl, self.server_url).wire()]

    def resolve_payload(self, page_payload: Any, resolved_at: datetime) -> Any:
        resolved = []
        for alert in page_payload:
            original = PostableAlert.model_validate(alert)
            resolved.append(
                original.model_copy(update={"ends_at": max(resolved_at, original.starts_at)}).wire()
            )
        return resolved

    def send(self, entry: OutboxEntry) -> None:
        response = post(self._http, f"{self.url}/api/v2/alerts", json=entry.payload)
        if response.status_code != 200:
            raise DeliveryFailed(
                sanitize(f"HTTP {response.status_code}: {response.text}", limit=300)
            )

    def close(self) -> None:
        super().close()
        self._http.close()
