"""`fleetdesk serve` with --metrics-source prometheus and --alertmanager-url, as an operator runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fleetdesk.server.integrations.alertmanager import ALERT_NAME

from .processes import Daemon, free_port, prometheus, wait_until

pytestmark = pytest.mark.integration

MODEL = "ig_stories_tray_mtml.v30"
TEAM = "ig-stories-ranking"


def fleetdesk(*args: str) -> list[str]:
    return [sys.executable, "-m", "fleetdesk.cli", *args]


@pytest.fixture
def prometheus_daemon(tmp_path: Path) -> Iterator[Daemon]:
    directory = tmp_path / "prometheus"
    directory.mkdir()
    daemon = prometheus(directory, [])
    daemon.start()
    yield daemon
    daemon.stop()


def test_serve_reads_prometheus_and_pages_alertmanager(
    tmp_path: Path, prometheus_daemon: Daemon, alertmanager_daemon: Daemon
) -> None:
    db = tmp_path / "served.sqlite"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            fleetdesk("serve", "--fleet", "small", "--db", str(db), "--port", str(port),
                      "--metrics-source", "prometheus", "--prometheus-url", prometheus_daemon.url,
                      "--alertmanager-url", alertmanager_daemon.url),
            stdout=output, stderr=subprocess.STDOUT,
        )
    try:
        def ready() -> bool:
            assert process.poll() is None, log.read_text()
            try:
                return httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(ready, 30.0, "fleetdesk serve to be ready")
        assert "metrics source: prometheus   paging: alertmanager" in log.read_text()
        token = subprocess.run(fleetdesk("token", "create", "--db", str(db), "--user", "ci", "--role", "oncall",
                                         "--team", TEAM), capture_output=True, text=True, check=True).stdout.strip()
        headers = {"Authorization": f"Bearer {token}"}

        # This Prometheus scrapes nothing: every bucket is a gap, shown as no data (never healthy).
        series = httpx.get(f"{url}/v1/models/{MODEL}/stability", params={"window": "6h"}, headers=headers,
                           timeout=10.0)
        assert series.status_code == 200, series.text
        assert series.json()["points"] == []

        escalation = httpx.post(f"{url}/v1/models/{MODEL}/actions/escalate", headers={**headers,
                                "Idempotency-Key": "serve-options-test-1"}, json={"reason": "from the CLI test"},
                                timeout=10.0)
        assert escalation.status_code == 200, escalation.text
        assert escalation.json()["pages"][0]["delivered_via"] == "alertmanager"

        def paged() -> bool:
            alerts = httpx.get(f"{alertmanager_daemon.url}/api/v2/alerts", timeout=2.0).json()
            return any(a["labels"].get("alertname") == ALERT_NAME and a["labels"].get("model_id") == MODEL
                       for a in alerts)

        wait_until(paged, 20.0, "the page in Alertmanager")
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert token not in log.read_text(), "the token must never reach the server's output"


def test_serve_refuses_prometheus_source_without_url(tmp_path: Path) -> None:
    result = subprocess.run(
        fleetdesk("serve", "--fleet", "small", "--db", str(tmp_path / "x.sqlite"), "--port", "0",
                  "--metrics-source", "prometheus"),
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "--metrics-source prometheus needs --prometheus-url URL" in result.stderr
