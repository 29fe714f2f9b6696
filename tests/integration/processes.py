"""Real Prometheus and Alertmanager as subprocesses on loopback, with config written by the test.

They are Debian's packaged binaries (``.ci/run`` installs them), started with
their own temp data directory and a random port, never the packages'
system services.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from ports import free_port

READY_DEADLINE = 30.0
STOP_DEADLINE = 10.0


def require_binary(name: str) -> str:
    """The binary's path; skips the test (with the reason) when it is not installed."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(
            f"{name} is not installed: integration tests need Debian's prometheus and "
            "prometheus-alertmanager packages (.ci/run installs them)"
        )
    return path


def wait_until(condition, deadline: float, what: str, interval: float = 0.05):  # type: ignore[no-untyped-def]
    """Poll ``condition`` until it returns something truthy; fail naming ``what`` at the deadline."""
    end = time.monotonic() + deadline
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {deadline:g}s waiting for {what}")
        time.sleep(interval)


class Daemon:
    """One subprocess with a readiness URL; ``start`` waits for /-/ready, ``stop`` for exit."""

    def __init__(self, name: str, argv: list[str], url: str, log: Path) -> None:
        self.name = name
        self.argv = argv
        self.url = url
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)
        wait_until(
            self._ready, READY_DEADLINE, f"{self.name} to be ready at {self.url} (log: {self.log})"
        )

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(
                f"{self.name} exited with {self.process.returncode}: {self.log.read_text()[-2000:]}"
            )
        try:
            return httpx.get(f"{self.url}/-/ready", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_DEADLINE)


def prometheus(directory: Path, scrape_targets: list[str], rule_files: list[Path] = ()) -> Daemon:  # type: ignore[assignment]
    """A Prometheus scraping ``scrape_targets`` (host:port) twice a second."""
    port = free_port()
    config = {
        "global": {
            "scrape_interval": "500ms",
            "evaluation_interval": "1s",
            "scrape_timeout": "450ms",
        },
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [
            {
                "job_name": "fleetdesk",
                "metrics_path": "/metrics",
                "static_configs": [{"targets": scrape_targets}],
            }
        ],
    }
    config_file = directory / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    (directory / "data").mkdir(exist_ok=True)
    argv = [
        require_binary("prometheus"),
        f"--config.file={config_file}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-lifecycle",
        "--log.level=warn",
    ]
    return Daemon("prometheus", argv, f"http://127.0.0.1:{port}", directory / "prometheus.log")


def alertmanager(directory: Path, port: int | None = None) -> Daemon:
    """An Alertmanager with one silent receiver and gossip off."""
    port = port or free_port()
    config = {
        "route": {
            "receiver": "nobody",
            "group_wait": "1s",
            "group_interval": "1s",
            "repeat_interval": "1h",
        },
        "receivers": [{"name": "nobody"}],
    }
    config_file = directory / "alertmanager.yml"
    config_file.write_text(yaml.safe_dump(config))
    (directory / "data").mkdir(exist_ok=True)
    argv = [
        require_binary("prometheus-alertmanager"),
        f"--config.file={config_file}",
        f"--storage.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",
        "--log.level=warn",
    ]
    return Daemon("alertmanager", argv, f"http://127.0.0.1:{port}", directory / "alertmanager.log")
