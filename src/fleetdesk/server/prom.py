"""Prometheus text exposition: request counts and latency, and per-model stability sums as counters (per task,
with a ``task`` label, for a multi-task model).

The stability sums are monotonic totals of every ingested bucket, so a real
Prometheus can ``rate()`` them and compute calibration and NE over any window
the way fleetdesk does: sum first, divide after.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fleetdesk.domain.text import sanitize
from fleetdesk.server.backend import Backend
from fleetdesk.server.store import buckets, model_rows

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def escape_label(value: str) -> str:
    """Label value escaping per the text format: backslash, double quote, newline."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def label_value(text: str) -> str:
    """What a label holds for data-borne ``text``: sanitized, since whoever reads /metrics (curl, a scrape
    debugger) may be a terminal; the text format itself allows any UTF-8 but acts on nothing. Readers of
    the series (fleetdesk.server.integrations.prometheus_source) match on this same value."""
    return sanitize(text)


def _labels(**labels: str) -> str:
    return (
        "{"
        + ",".join(f'{name}="{escape_label(label_value(value))}"' for name, value in labels.items())
        + "}"
    )


def _number(value: float) -> str:
    """A sample value as the text format spells it; a total stored before sums were bounded may be infinite."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    return repr(float(value)) if value != int(value) or abs(value) >= 1e15 else str(int(value))


class RequestMetrics:
    """Counts and latency histograms per (method, route template, status)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str, str], int] = defaultdict(int)
        self._histograms: dict[tuple[str, str], list[int]] = {}
        self._sums: dict[tuple[str, str], float] = defaultdict(float)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._counts[(method, route, str(status))] += 1
            histogram = self._histograms.setdefault(
                (method, route), [0] * (len(LATENCY_BUCKETS) + 1)
            )
            histogram[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
            self._sums[(method, route)] += seconds

    def render(self) -> list[str]:
        with self._lock:
            lines = [
                "# HELP fleetdesk_http_requests_total HTTP requests handled.",
                "# TYPE fleetdesk_http_requests_total counter",
            ]
            for (method, route, status), count in sorted(self._counts.items()):
                lines.append(
                    f"fleetdesk_http_requests_total{_labels(method=method, route=route, status=status)} {count}"
                )
            lines += [
                "# HELP fleetdesk_http_request_duration_seconds HTTP request latency.",
                "# TYPE fleetdesk_http_request_duration_seconds histogram",
            ]
            for (method, route), histogram in sorted(self._histograms.items()):
                cumulative = 0
                for bound, count in zip((*LATENCY_BUCKETS, float("inf")), histogram):
                    cumulative += count
                    le = "+Inf" if bound == float("inf") else repr(bound)
                    lines.append(
                        "fleetdesk_http_request_duration_seconds_bucket"
                        f"{_labels(method=method, route=route, le=le)} {cumulative}"
                    )
                lines.append(
                    f"fleetdesk_http_request_duration_seconds_sum{_labels(method=method, route=route)}"
                    f" {self._sums[(method, route)]!r}"
                )
                lines.append(
                    f"fleetdesk_http_request_duration_seconds_count{_labels(method=method, route=route)}"
                    f" {cumulative}"
                )
            return lines


KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Methods counted by name; any other token a client sends is counted as "other": every distinct label value is a
series kept for the server's life, so a label a client chooses freely grows /metrics and memory without end."""


class RequestMetricsMiddleware:
    """Pure ASGI middleware (keeps event streams streaming) timing each HTTP request."""

    def __init__(
        self, app: Callable[[Scope, Receive, Send], Awaitable[None]], metrics: RequestMetrics
    ) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope["method"] if scope["method"] in KNOWN_METHODS else "other"
            self.metrics.observe(method, template, status, time.perf_counter() - started)


_STABILITY = (
    (
        "fleetdesk_stability_events_total",
        "total_weight",
        "Events (or total weight) in ingested buckets.",
    ),
    (
        "fleetdesk_stability_label_sum_total",
        "total_label_sum",
        "Sum of labels in ingested buckets.",
    ),
    (
        "fleetdesk_stability_prediction_sum_total",
        "total_prediction_sum",
        "Sum of predictions in ingested buckets.",
    ),
    (
        "fleetdesk_stability_cross_entropy_sum_total",
        "total_cross_entropy_sum",
        "Sum of per-event cross-entropy (nats) in ingested buckets.",
    ),
)


def render(backend: Backend, requests: RequestMetrics) -> str:
    rows = model_rows.every_total(backend.store.connection())
    lines = requests.render()
    # Which replica closes slots: exactly one of them should say 1 (alert when none does).
    lines += [
        "# HELP fleetdesk_leader 1 on the replica that closes slots, recomputes SLOs and opens incidents.",
        "# TYPE fleetdesk_leader gauge",
        f"fleetdesk_leader {int(backend.leading)}",
    ]
    if backend.evaluated_at is not None:
        lines += [
            "# HELP fleetdesk_slo_evaluated_timestamp_seconds When this replica last recomputed every SLO.",
            "# TYPE fleetdesk_slo_evaluated_timestamp_seconds gauge",
            f"fleetdesk_slo_evaluated_timestamp_seconds {backend.evaluated_at.timestamp():.0f}",
        ]
    # A multi-task model's series are its tasks' (a task label each) and only those: summed over the model's
    # series they are its totals, as a single-task model's one series is.
    task_rows: dict[str, list[Any]] = defaultdict(list)
    for row in buckets.task_totals(backend.store.connection()):
        task_rows[row[0]].append(row)
    for metric, column, help_text in _STABILITY:
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} counter"]
        for row in rows:
            model = {"model_id": row["id"], "model_type": row["type"], "tier": row["tier"]}
            tasks = task_rows.get(row["id"])
            if not tasks:
                lines.append(f"{metric}{_labels(**model)} {_number(row[column])}")
                continue
            lines += [
                f"{metric}{_labels(**model, task=task['task'])} {_number(task[column])}"
                for task in tasks
            ]
    return "\n".join(lines) + "\n"
