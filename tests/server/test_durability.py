"""SIGKILL mid-stream of actions loses no acknowledged action (a real `fleetdesk serve` subprocess)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path

import httpx

from fleetdesk.server.auth import create_token
from fleetdesk.server.store import Store
from fleetdesk.wire import AccessRole

MODEL = "ig_feed_late-stage_mtml.v41"
WORKERS = 4
KILL_AFTER = 24


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleetdesk.cli",
            "serve",
            "--db",
            str(db),
            "--port",
            "0",
            "--now",
            "2026-11-30T12:00:00+00:00",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # printed once the socket listens and the db is ready
    assert "fleetdesk serving" in first, (
        first + process.stderr.read() if process.poll() is not None else first
    )
    return process, first.split(" on ")[-1].strip()


def test_sigkill_loses_no_acknowledged_action(tmp_path: Path) -> None:
    db = tmp_path / "fleetdesk.sqlite"
    store = Store(db)
    store.migrate()
    token = create_token(store, "chaos", AccessRole.ADMIN, [])
    store.close()
    headers = {"Authorization": f"Bearer {token}"}

    process, url = _serve(db)
    acknowledged: list[str] = []
    lock = threading.Condition()

    def worker() -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            while True:
                key = uuid.uuid4().hex
                try:
                    response = client.post(
                        f"/v1/models/{MODEL}/actions/note",
                        json={"text": key},
                        headers={"Idempotency-Key": key},
                    )
                except httpx.HTTPError:
                    return  # the server is gone
                assert response.status_code == 200, response.text
                with lock:
                    acknowledged.append(key)
                    lock.notify_all()

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    try:
        for thread in threads:
            thread.start()
        with lock:
            assert lock.wait_for(lambda: len(acknowledged) >= KILL_AFTER, timeout=60)
        os.kill(process.pid, signal.SIGKILL)
        for thread in threads:
            thread.join(30)
    finally:
        process.kill()
        process.wait(10)
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    assert process.returncode == -signal.SIGKILL

    restarted, url = _serve(db)
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            records = client.get("/v1/audit", params={"model_id": MODEL, "limit": 1000}).json()[
                "items"
            ]
            keys = Counter(record["idempotency_key"] for record in records)
            missing = [key for key in acknowledged if keys[key] != 1]
            assert not missing, f"{len(missing)} acknowledged action(s) lost or duplicated"
            assert all(record["detail"]["text"] == record["idempotency_key"] for record in records)
            # A client retrying an acknowledged intent after the crash gets the stored answer, not a second note.
            replay = client.post(
                f"/v1/models/{MODEL}/actions/note",
                json={"text": acknowledged[0]},
                headers={"Idempotency-Key": acknowledged[0]},
            )
            assert replay.status_code == 200 and replay.headers["idempotent-replayed"] == "true"
            assert client.get("/v1/audit", params={"model_id": MODEL}).json()["total"] == len(
                records
            )
    finally:
        restarted.terminate()
        restarted.wait(10)
        restarted.stdout.close()  # type: ignore[union-attr]
        restarted.stderr.close()  # type: ignore[union-attr]
