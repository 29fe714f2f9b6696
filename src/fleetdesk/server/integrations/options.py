"""Plugging the integrations chosen in the server's settings (fleetdesk.settings.server) into a backend.

``fleetdesk serve`` calls ``check(settings)`` before it opens anything and ``configure(backend, settings,
url)`` once the backend is open; it closes what ``configure`` returns when it stops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from fleetdesk.settings.server import WEBHOOK_SECRET_ENV, ServerSettings

if TYPE_CHECKING:
    from fleetdesk.server.backend import Backend
    from fleetdesk.server.integrations.outbound import OutboundPagingTarget
    from fleetdesk.server.integrations.prometheus_source import PrometheusMetricsSource

log = logging.getLogger("fleetdesk.server.integrations")


class IntegrationError(ValueError):
    """An integration cannot be set up as configured; the message says how to fix it."""


@dataclass
class Integrations:
    """What ``configure`` plugged in; ``close`` stops retry threads and connections."""

    metrics: PrometheusMetricsSource | None = None
    paging: OutboundPagingTarget | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


def check(settings: ServerSettings) -> None:
    """What the settings alone cannot tell: the webhook secret can be read (before anything is opened)."""
    if settings.webhook_url:
        webhook_secret(settings)


def configure(backend: Backend, settings: ServerSettings, server_url: str) -> Integrations:
    """Plug the chosen metrics source and paging target into ``backend`` (served at ``server_url``)."""
    check(settings)
    done = Integrations()
    if settings.metrics_source == "prometheus" and settings.prometheus_url:
        from fleetdesk.server.integrations.prometheus_api import PrometheusTimeouts
        from fleetdesk.server.integrations.prometheus_source import PrometheusMetricsSource

        lag = (
            backend.config.bucket
            if settings.prometheus_lag is None
            else timedelta(seconds=settings.prometheus_lag)
        )
        done.metrics = PrometheusMetricsSource(
            settings.prometheus_url,
            backend.config.bucket,
            lag=lag,
            timeouts=PrometheusTimeouts(query=settings.prometheus_timeout),
            selector=settings.prometheus_selector,
        )
        backend.metrics = done.metrics
        done.closers.append(done.metrics.close)
        _report_prometheus(done.metrics)
    if settings.alertmanager_url:
        from fleetdesk.server.integrations.alertmanager import AlertmanagerTarget

        done.paging = AlertmanagerTarget(
            settings.alertmanager_url, server_url, ttl=timedelta(hours=settings.alert_ttl)
        )
    elif settings.webhook_url:
        from fleetdesk.server.integrations.webhook import WebhookTarget

        done.paging = WebhookTarget(settings.webhook_url, webhook_secret(settings), server_url)
    if done.paging is not None:
        attach_paging(backend, done.paging)
        done.closers.append(done.paging.close)
    return done


def _report_prometheus(source: PrometheusMetricsSource) -> None:
    """Say at start-up whether Prometheus answers and has our counters; serving goes on either way."""
    from fleetdesk.server.integrations.prometheus_api import PrometheusError
    from fleetdesk.server.integrations.urls import public_url

    try:
        models = source.probe()
    except PrometheusError as error:
        log.warning(
            "%s: %s; stability series answer 503 until it is back",
            error.details.title,
            error.details.detail,
        )
        return
    where = public_url(source.api.base_url)
    if models == 0:
        log.warning(
            "Prometheus at %s has no fleetdesk_stability counters yet: is it scraping a fleetdesk "
            "server's /metrics? Stability series show no data until it does",
            where,
        )
    else:
        log.info("Prometheus at %s has stability counters for %d models", where, models)


def attach_paging(backend: Backend, target: OutboundPagingTarget) -> None:
    """Make ``target`` the backend's paging target and start its outbox."""
    target.attach(backend)
    backend.paging = target


def webhook_secret(settings: ServerSettings) -> bytes:
    """The signing secret: from its 0600 file, else from $FLEETDESK_WEBHOOK_SECRET."""
    if settings.webhook_secret_file is not None:
        secret = read_secret_file(settings.webhook_secret_file)
    else:
        secret = (
            (settings.webhook_secret.get_secret_value() if settings.webhook_secret else "")
            .strip()
            .encode()
        )
    if not secret:
        raise IntegrationError(
            f"webhook_url needs a signing secret: webhook_secret_file PATH or ${WEBHOOK_SECRET_ENV}"
        )
    return secret


def read_secret_file(path: Path) -> bytes:
    """A secret's file: only its owner may read it, and it is small and regular."""
    from fleetdesk.settings.local_files import KIB, read_regular_file

    try:
        if path.stat().st_mode & 0o077:
            raise IntegrationError(
                f"the webhook secret file {path} is readable by others: chmod 600 it"
            )
        return read_regular_file(path, 4 * KIB).strip()
    except OSError as error:
        raise IntegrationError(
            f"cannot read the webhook secret file {path}: {error.strerror}"
        ) from None
