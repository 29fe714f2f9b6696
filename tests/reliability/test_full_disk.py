"""A full disk under a real ``fleetdesk serve``: every kind of write is a clear 507 that changes nothing,
/readyz says not ready while reads go on, and once space is freed the same intents apply, each once."""

from __future__ import annotations

import os
import subprocess
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from serve_process import NOW, serve_ready

MODEL = "ig_feed_late-stage_mtml.v41"
NOTE = "x" * 9000  # a few pages per note: the disk fills in a few hundred writes


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    mount = tmp_path / "disk"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)]).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _writes(now: datetime) -> dict[str, tuple[str, str, dict]]:
    """One request of each kind of write at server time ``now`` (the hour before it not yet ingested)."""
    closed = now - timedelta(hours=1)
    return {
        "action": ("POST", f"/v1/models/{MODEL}/actions/note", {"text": "written on a full disk"}),
        "ingest": (
            "POST",
            "/v1/metrics",
            {
                "buckets": [
                    {
                        "model_id": "ig_notifications_late-stage_mtml.v15",
                        "start": closed.isoformat(),
                        "weight": 1e4,
                        "label_sum": 1e3,
                        "prediction_sum": 1e3,
                        "cross_entropy_sum": 2.6e3,
                    }
                ]
            },
        ),
        "clock": ("PUT", "/v1/clock", {"now": (now + timedelta(hours=1)).isoformat()}),
    }


def test_a_full_disk_is_a_507_not_ready_and_nothing_lost(small_disk: Path) -> None:
    server, token = serve_ready(small_disk / "fleetdesk.sqlite")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            now = datetime.fromisoformat(NOW) + timedelta(hours=1)  # the seeded history ends at NOW
            moved = client.put(
                "/v1/clock", json={"now": now.isoformat()}, headers={"Idempotency-Key": "first"}
            )
            assert moved.status_code == 200, moved.text
            free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
            (small_disk / "filler").write_bytes(b"\0" * max(free - 256 * 1024, 0))
            # Notes until the disk refuses one (the WAL takes the last free pages).
            refused = None
            for _ in range(400):
                response = client.post(
                    f"/v1/models/{MODEL}/actions/note",
                    json={"text": NOTE},
                    headers={"Idempotency-Key": uuid.uuid4().hex},
                )
                if response.status_code != 200:
                    refused = response
                    break
            assert refused is not None, "the disk never filled"
            assert refused.status_code == 507, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            assert refused.json()["type"] == "urn:fleetdesk:problem:storage-full"
            audited = client.get("/v1/audit", params={"limit": 1000}).json()["total"]

            keys = {kind: uuid.uuid4().hex for kind in _writes(now)}
            for kind, (method, path, body) in _writes(now).items():
                response = client.request(
                    method, path, json=body, headers={"Idempotency-Key": keys[kind]}
                )
                assert response.status_code == 507, (kind, response.text)
                assert "Traceback" not in response.text and "sqlite" not in response.text.lower()
            ready = client.get("/readyz")
            assert ready.status_code == 503 and "disk is full" in ready.json()["detail"], ready.text
            assert client.get("/v1/fleet/summary").status_code == 200  # reads go on
            assert client.get("/v1/info").json()["now"] == now.isoformat().replace(
                "+00:00", "Z"
            )  # clock too
            assert (
                client.get("/v1/audit", params={"limit": 1000}).json()["total"] == audited
            )  # nothing half-done

            (small_disk / "filler").unlink()
            assert client.get("/readyz").status_code == 200
            for kind, (method, path, body) in _writes(now).items():
                applied = client.request(
                    method, path, json=body, headers={"Idempotency-Key": keys[kind]}
                )
                assert applied.status_code == 200, (kind, applied.text)
                again = client.request(
                    method, path, json=body, headers={"Idempotency-Key": keys[kind]}
                )
                assert again.headers.get("idempotent-replayed") == "true", kind
            assert (
                client.get("/v1/audit", params={"limit": 1000}).json()["total"] == audited + 1
            )  # the note, once
    finally:
        server.stop()
    assert not [line for line in server.log if "Traceback" in line and "OperationalError" in line]
    assert any("database disk full" in line for line in server.log)


def test_the_readiness_probe_answers_for_the_disk_before_a_write_fails(small_disk: Path) -> None:
    server, _ = serve_ready(small_disk / "fleetdesk.sqlite")
    try:
        free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
        (small_disk / "filler").write_bytes(b"\0" * max(free - 64 * 1024, 0))
        ready = httpx.get(server.url + "/readyz", timeout=10)
        assert (
            ready.status_code == 503 and ready.json()["type"] == "urn:fleetdesk:problem:unavailable"
        )
    finally:
        server.stop()
