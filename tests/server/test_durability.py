"""SIGKILL mid-stream of actions loses no acknowledged action (a real `fleetdesk serve` subprocess)."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from pathlib import Path

import httpx

from serve_process import ServeProcess, admin_token

MODEL = "ig_feed_late-stage_mtml.v41"
WORKERS = 4
KILL_AFTER = 24


def test_sigkill_loses_no_acknowledged_action(tmp_path: Path) -> None:
    db = tmp_path / "fleetdesk.sqlite"
    token = admin_token(db)
    headers = {"Authorization": f"Bearer {token}"}

    server = ServeProcess(db).start()
    url = server.url
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
        server.kill()  # SIGKILL, and checks that this is what ended it
        for thread in threads:
            thread.join(30)
    finally:
        server.stop()

    restarted = ServeProcess(db).start()
    try:
        with httpx.Client(base_url=restarted.url, headers=headers, timeout=10) as client:
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
        restarted.stop()
