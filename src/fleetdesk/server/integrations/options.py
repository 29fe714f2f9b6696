"""`fleetdesk serve` options for the integrations, and plugging them into an opened backend.

The serve command calls ``add_arguments(parser)`` when it builds its parser,
``check(args)`` before it opens anything, and ``configure(backend, args,
url)`` once the backend is open; it closes what ``configure`` returns when it
stops. Secrets (the webhook signing key) come
from a file or the environment, never from the command line.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleetdesk.server.backend import Backend
    from fleetdesk.server.integrations.outbound import OutboundPagingTarget
    from fleetdesk.server.integrations.prometheus_source import PrometheusMetricsSource

log = logging.getLogger("fleetdesk.server.integrations")

WEBHOOK_SECRET_ENV = "FLEETDESK_WEBHOOK_SECRET"


class IntegrationError(ValueError):
    """The integration options do not fit together; the message says how to fix them."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the metrics-source and paging options to ``fleetdesk serve``."""
    from fleetdesk.commands.arguments import number

    metrics = parser.add_argument_group("metrics source")
    metrics.add_argument("--metrics-source", choices=("store", "prometheus"), default="store",
                         help="read stability series from the local store (default) or from Prometheus")
    metrics.add_argument("--prometheus-url", metavar="URL", help="Prometheus base URL, e.g. http://127.0.0.1:9090")
    metrics.add_argument("--prometheus-lag", type=number(0.0, 86_400.0), metavar="SECONDS",
                         help="how long after a bucket closes its sums reach Prometheus' counters (default: one "
                              "bucket, right for Prometheus scraping a fleetdesk server; 0 for live exporters)")
    metrics.add_argument("--prometheus-timeout", type=number(0.1, 600.0), default=10.0, metavar="SECONDS",
                         help="longest a Prometheus query may take (default 10)")
    metrics.add_argument("--prometheus-selector", default="", metavar="MATCHERS",
                         help="extra label matchers for every query, e.g. 'job=\"fleetdesk\"'")
    paging = parser.add_argument_group("paging (escalate)")
    paging.add_argument("--alertmanager-url", metavar="URL", help="post escalations to this Alertmanager (API v2)")
    paging.add_argument("--alert-ttl", type=number(0.1, 24.0 * 365), default=24.0, metavar="HOURS",
                        help="how long an escalation alert lasts unless its incident resolves first (default 24)")
    paging.add_argument("--webhook-url", metavar="URL", help="post escalations as signed JSON to this URL")
    paging.add_argument("--webhook-secret-file", type=Path, metavar="PATH",
                        help=f"file holding the webhook signing secret (or set ${WEBHOOK_SECRET_ENV})")


@dataclass
class Integrations:
    """What ``configure`` plugged in; ``close`` stops retry threads and connections."""

    metrics: PrometheusMetricsSource | None = None
    paging: OutboundPagingTarget | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()


def check(args: argparse.Namespace) -> None:
    """Refuse options that do not fit together, before anything is opened or seeded."""
    if args.alertmanager_url and args.webhook_url:
        raise IntegrationError("choose one paging target: --alertmanager-url or --webhook-url")
    if args.metrics_source == "prometheus" and not args.prometheus_url:
        raise IntegrationError("--metrics-source prometheus needs --prometheus-url URL")
    if args.metrics_source != "prometheus" and args.prometheus_url:
        raise IntegrationError("--prometheus-url is only used with --metrics-source prometheus")
    if args.webhook_url:
        _webhook_secret(args.webhook_secret_file)


def configure(backend: Backend, args: argparse.Namespace, server_url: str) -> Integrations:
    """Plug the chosen metrics source and paging target into ``backend`` (served at ``server_url``)."""
    check(args)
    done = Integrations()
    if args.metrics_source == "prometheus":
        from fleetdesk.server.integrations.prometheus_api import PrometheusTimeouts
        from fleetdesk.server.integrations.prometheus_source import PrometheusMetricsSource

        lag = backend.config.bucket if args.prometheus_lag is None else timedelta(seconds=args.prometheus_lag)
        done.metrics = PrometheusMetricsSource(
            args.prometheus_url, backend.config.bucket, lag=lag,
            timeouts=PrometheusTimeouts(query=args.prometheus_timeout), selector=args.prometheus_selector,
        )
        backend.metrics = done.metrics
        done.closers.append(done.metrics.close)
        _report_prometheus(done.metrics)
    if args.alertmanager_url:
        from fleetdesk.server.integrations.alertmanager import AlertmanagerTarget

        done.paging = AlertmanagerTarget(args.alertmanager_url, server_url, ttl=timedelta(hours=args.alert_ttl))
    elif args.webhook_url:
        from fleetdesk.server.integrations.webhook import WebhookTarget

        done.paging = WebhookTarget(args.webhook_url, _webhook_secret(args.webhook_secret_file), server_url)
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
        log.warning("%s: %s; stability series answer 503 until it is back", error.details.title,
                    error.details.detail)
        return
    where = public_url(source.api.base_url)
    if models == 0:
        log.warning("Prometheus at %s has no fleetdesk_stability counters yet: is it scraping a fleetdesk "
                    "server's /metrics? Stability series show no data until it does", where)
    else:
        log.info("Prometheus at %s has stability counters for %d models", where, models)


def attach_paging(backend: Backend, target: OutboundPagingTarget) -> None:
    """Make ``target`` the backend's paging target and start its outbox."""
    target.attach(backend)
    backend.paging = target


def _webhook_secret(path: Path | None) -> bytes:
    from fleetdesk.settings.local_files import KIB, read_regular_file

    if path is not None:
        try:
            if path.stat().st_mode & 0o077:
                raise IntegrationError(f"the webhook secret file {path} is readable by others: chmod 600 it")
            secret = read_regular_file(path, 4 * KIB).strip()
        except OSError as error:
            raise IntegrationError(f"cannot read the webhook secret file {path}: {error.strerror}") from None
    else:
        secret = os.environ.get(WEBHOOK_SECRET_ENV, "").strip().encode()
    if not secret:
        raise IntegrationError(f"--webhook-url needs a signing secret: --webhook-secret-file PATH or ${WEBHOOK_SECRET_ENV}")
    return secret
