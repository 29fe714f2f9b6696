"""`fleetdesk serve` with --metrics-source prometheus and --alertmanager-url, as an operator runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fleetdesk.cli import main
from fleetdesk.server.integrations.alertmanager import ALERT_NAME
from ports import free_port

from .processes import Daemon, prometheus, wait_until

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
            fleetdesk(
                "serve",
                "--fleet",
                "small",
                "--db",
                str(db),
                "--port",
                str(port),
                "--metrics-source",
                "prometheus",
                "--prometheus-url",
                prometheus_daemon.url,
                "--alertmanager-url",
                alertmanager_daemon.url,
            ),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:

        def ready() -> bool:
            assert process.poll() is None, log.read_text()
            try:
                return httpx.get(f"{url}/readyz", timeout=1.0).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(ready, 30.0, "fleetdesk serve to be ready")
        started = log.read_text()
        assert "metrics source: prometheus   paging: alertmanager" in started
        assert (
            "has no fleetdesk_stability counters yet: is it scraping" in started
        )  # the operator is told
        token = subprocess.run(
            fleetdesk(
                "token",
                "create",
                "--db",
                str(db),
                "--user",
                "ci",
                "--role",
                "oncall",
                "--team",
                TEAM,
            ),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        headers = {"Authorization": f"Bearer {token}"}

        # This Prometheus scrapes nothing: every bucket is a gap, shown as no data (never healthy).
        series = httpx.get(
            f"{url}/v1/models/{MODEL}/stability",
            params={"window": "6h"},
            headers=headers,
            timeout=10.0,
        )
        assert series.status_code == 200, series.text
        assert series.json()["points"] == []

        escalation = httpx.post(
            f"{url}/v1/models/{MODEL}/actions/escalate",
            headers={**headers, "Idempotency-Key": "serve-options-test-1"},
            json={"reason": "from the CLI test"},
            timeout=10.0,
        )
        assert escalation.status_code == 200, escalation.text
        assert escalation.json()["pages"][0]["delivered_via"] == "alertmanager"

        def paged() -> bool:
            alerts = httpx.get(f"{alertmanager_daemon.url}/api/v2/alerts", timeout=2.0).json()
            return any(
                a["labels"].get("alertname") == ALERT_NAME and a["labels"].get("model_id") == MODEL
                for a in alerts
            )

        wait_until(paged, 20.0, "the page in Alertmanager")
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert token not in log.read_text(), "the token must never reach the server's output"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--metrics-source", "prometheus"], "metrics_source prometheus needs prometheus_url"),
        (
            ["--prometheus-url", "http://127.0.0.1:9090"],
            "prometheus_url is only used with metrics_source prometheus",
        ),
        (
            ["--alertmanager-url", "http://a:9093", "--webhook-url", "http://b/hook"],
            "choose one paging target",
        ),
        (["--webhook-url", "http://127.0.0.1:9/hook"], "webhook_url needs a signing secret"),
    ],
)
def test_serve_refuses_options_that_do_not_fit_before_touching_the_database(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    message: str,
) -> None:
    monkeypatch.delenv("FLEETDESK_WEBHOOK_SECRET", raising=False)
    db = tmp_path / "never.sqlite"
    assert main(["serve", "--fleet", "small", "--db", str(db), "--port", "0", *options]) == 2
    assert message in capsys.readouterr().err
    assert not db.exists()


def test_a_webhook_secret_file_others_can_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret-value")
    secret.chmod(0o644)
    assert (
        main(
            [
                "serve",
                "--db",
                str(tmp_path / "x.sqlite"),
                "--port",
                "0",
                "--webhook-url",
                "http://127.0.0.1:9/hook",
                "--webhook-secret-file",
                str(secret),
            ]
        )
        == 2
    )
    output = capsys.readouterr()
    assert "readable by others: chmod 600" in output.err
    assert "s3cret-value" not in output.err + output.out
