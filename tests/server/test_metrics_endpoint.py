"""Probes and the Prometheus exposition."""

from __future__ import annotations

import re

import httpx

from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.server.prom import escape_label

from .helpers import get

_SAMPLE = re.compile(r'^([a-z_]+)(\{(?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$')


def test_probes(server: EmbeddedServer) -> None:
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{server.url}/readyz").json()["status"] == "ready"


def test_metrics_exposes_requests_and_stability_counters(server: EmbeddedServer) -> None:
    get(server, "/v1/fleet/summary")
    text = httpx.get(f"{server.url}/metrics").text
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(_SAMPLE.match(line) for line in samples), [
        line for line in samples if not _SAMPLE.match(line)
    ][:3]
    assert (
        'fleetdesk_http_requests_total{method="GET",route="/v1/fleet/summary",status="200"} 1'
        in text
    )
    assert "# TYPE fleetdesk_stability_events_total counter" in text
    model_lines = [
        line for line in samples if line.startswith("fleetdesk_stability_label_sum_total{")
    ]
    assert len(model_lines) == len(server.backend.registry)
    assert (
        'model_id="ig_feed_late-stage_mtml.v41",model_type="ig_feed_late-stage_mtml",tier="TIER0"'
        in text
    )
    for name in ("events", "label_sum", "prediction_sum", "cross_entropy_sum"):
        assert f"fleetdesk_stability_{name}_total{{" in text


def test_label_values_are_escaped() -> None:
    assert escape_label('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
