"""Two real ``fleetdesk serve`` replicas on one PostgreSQL database (tests/postgres_cluster.py).

An action through one is in the other's audit log and on its live event stream, and resumes by
Last-Event-ID on either; the same Idempotency-Key sent to both at once applies once; when the leader
is SIGKILLed, the other replica takes over closing slots within seconds, and delivers the pages it had
queued for an Alertmanager that was down; two started together on a new database both serve the one seed.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from integration.processes import alertmanager, wait_until
from ports import free_port
from postgres_cluster import Cluster
from serve_process import NOW, ServeProcess, admin_token, serve_ready

MODEL = "ig_feed_late-stage_mtml.v41"
TAKEOVER_SECONDS = 30  # the ticker asks every 5 s; generous for a loaded machine


@pytest.fixture
def replicas(postgres: Cluster) -> Iterator[tuple[ServeProcess, ServeProcess, str]]:
    """The first replica seeds the database and leads; the second joins it."""
    url = postgres.fresh_database()
    first, token = serve_ready(url)
    second = ServeProcess(url, free_port()).start()
    try:
        yield first, second, token
    finally:
        second.stop()
        first.stop()


def _client(server: ServeProcess, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
    )


def _note(client: httpx.Client, text: str, key: str | None = None) -> httpx.Response:
    return client.post(
        f"/v1/models/{MODEL}/actions/note",
        json={"text": text},
        headers={"Idempotency-Key": key or uuid.uuid4().hex},
    )


def _gauge(client: httpx.Client, name: str) -> float | None:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_an_action_through_one_replica_reaches_the_others_audit_and_stream(
    replicas: tuple[ServeProcess, ServeProcess, str],
) -> None:
    first, second, token = replicas
    received: queue.Queue[dict[str, object]] = queue.Queue()
    connected = threading.Event()

    def listen() -> None:
        with _client(second, token) as client, client.stream("GET", "/v1/events") as stream:
            for line in stream.iter_lines():
                if line.startswith(": connected"):
                    connected.set()
                elif line.startswith("data:"):
                    received.put(json.loads(line[5:]))
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert connected.wait(20), "the second replica's event stream did not open"
    with _client(first, token) as a, _client(second, token) as b:
        before = b.get("/v1/events/log", params={"after": 0, "limit": 500}).json()["last_id"]
        noted = _note(a, "seen from the other replica")
        assert noted.status_code == 200, noted.text
        event = received.get(timeout=20)  # woken by NOTIFY, not by a write of its own
        assert event["model_id"] == MODEL
        audit = b.get("/v1/audit").json()["items"]
        assert audit[0]["model_id"] == MODEL and audit[0]["detail"]["text"] == (
            "seen from the other replica"
        )
        # Resuming after the event id seen on one replica, on the other, gives the same events.
        resumed_a = a.get("/v1/events/log", params={"after": before}).json()["items"]
        resumed_b = b.get("/v1/events/log", params={"after": before}).json()["items"]
        assert resumed_a == resumed_b and resumed_a[0]["id"] == event["id"]
    listener.join(5)


def test_one_key_sent_to_both_replicas_at_once_applies_once(
    replicas: tuple[ServeProcess, ServeProcess, str],
) -> None:
    first, second, token = replicas
    key = uuid.uuid4().hex
    answers: list[httpx.Response] = []
    start = threading.Barrier(2)

    def send(server: ServeProcess) -> None:
        with _client(server, token) as client:
            start.wait()
            answers.append(_note(client, "once", key))

    threads = [threading.Thread(target=send, args=(server,)) for server in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    statuses = sorted(answer.status_code for answer in answers)
    # One applied it; the other replayed its stored answer, or (still running) was told to retry.
    assert statuses in ([200, 200], [200, 409]), [a.text for a in answers]
    with _client(first, token) as client:
        if 409 in statuses:
            assert _note(client, "once", key).status_code == 200  # the retry replays
        audit = client.get("/v1/audit").json()["items"]
    assert [record["idempotency_key"] for record in audit].count(key) == 1


def test_two_replicas_started_together_on_a_new_database_both_serve_it(postgres: Cluster) -> None:
    """`systemctl enable --now fleetdesk@1 fleetdesk@2` on an empty database: both find it unseeded, one
    seeds it and the other, waiting on the write lock meanwhile, serves what it seeded instead of exiting."""
    url = postgres.fresh_database()
    token = admin_token(url)
    replicas = [ServeProcess(url, free_port(), "--fleet", "large") for _ in range(2)]
    failed: list[BaseException] = []

    def start(replica: ServeProcess) -> None:
        try:
            replica.start()
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            failed.append(error)

    threads = [threading.Thread(target=start, args=(replica,)) for replica in replicas]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failed, failed
        for replica in replicas:
            with _client(replica, token) as client:
                assert client.get("/readyz").json()["models"] == 1200
                assert client.get("/v1/fleet/summary").json()["total_models"] == 1200
        wait_until(lambda: all(len(replica.log) >= 2 for replica in replicas), 10, "their banners")
        seeder, other = sorted(replicas, key=lambda r: "seeded from large" not in "".join(r.log))
        assert "seeded from large" not in "".join(other.log)
        # Each says what it is doing while the seed runs: how far the seeding one is, and that the other waits.
        assert "seeded 1,200 of 1,200 models (100%)" in "".join(seeder.log)
        said = "".join(other.log)
        assert "waiting for it" in said and "another fleetdesk seeded it" in said, said
    finally:
        for replica in replicas:
            replica.stop()


def test_when_the_leader_is_killed_the_other_replica_closes_the_next_slot(
    postgres: Cluster,
) -> None:
    url = postgres.fresh_database()
    leader, token = serve_ready(url)
    # The follower's clock is an hour on: a slot the leader has not closed.
    follower = ServeProcess(url, free_port(), "--now", "2026-11-30T13:00:00+00:00").start()
    try:
        with _client(leader, token) as a, _client(follower, token) as b:
            assert _gauge(a, "fleetdesk_leader") == 1
            assert _gauge(b, "fleetdesk_leader") == 0
            assert _gauge(b, "fleetdesk_slo_evaluated_timestamp_seconds") is None
            leader.kill()
            deadline = time.monotonic() + TAKEOVER_SECONDS
            while _gauge(b, "fleetdesk_leader") != 1:
                assert time.monotonic() < deadline, "no replica took over"
                time.sleep(0.5)
            evaluated = _gauge(b, "fleetdesk_slo_evaluated_timestamp_seconds")
            assert evaluated is not None and evaluated > _epoch(NOW)
    finally:
        follower.stop()
        leader.stop()


def _epoch(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


@pytest.mark.integration
def test_a_page_queued_by_a_replica_that_died_is_delivered_by_the_other(
    postgres: Cluster, tmp_path: Path
) -> None:
    """The escalation goes out through the first replica while Alertmanager is down, so its page waits in the
    shared outbox; that replica is SIGKILLed; once Alertmanager is up the other replica delivers the page and
    writes so on the incident."""
    directory = tmp_path / "alertmanager"
    directory.mkdir()
    daemon = alertmanager(directory)  # configured, not started: down during the escalation
    url = postgres.fresh_database()
    first, token = serve_ready(url, "--alertmanager-url", daemon.url)
    second = ServeProcess(url, free_port(), "--alertmanager-url", daemon.url).start()
    try:
        with _client(first, token) as client:
            escalation = client.post(
                f"/v1/models/{MODEL}/actions/escalate",
                json={"reason": "queued on a replica that dies"},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            assert escalation.status_code == 200, escalation.text
            incident = escalation.json()["incident_id"]
            timeline = client.get(f"/v1/incidents/{incident}").json()["timeline"]
            assert [entry for entry in timeline if entry["kind"] == "page_failed"], timeline
        first.kill()
        daemon.start()

        def paged() -> list[dict[str, object]]:
            alerts = httpx.get(f"{daemon.url}/api/v2/alerts", timeout=2.0).json()
            return [alert for alert in alerts if alert["labels"].get("model_id") == MODEL]

        (alert,) = wait_until(paged, 60.0, "the queued page in Alertmanager", interval=0.5)
        assert alert["annotations"]["reason"] == "queued on a replica that dies"
        with _client(second, token) as client:

            def delivered() -> list[dict[str, object]]:
                timeline = client.get(f"/v1/incidents/{incident}").json()["timeline"]
                return [entry for entry in timeline if entry["kind"] == "page_delivered"]

            (entry,) = wait_until(delivered, 20.0, "the delivery on the incident", interval=0.5)
            assert "delivered on try" in str(entry["text"])
    finally:
        second.stop()
        first.stop()
        daemon.stop()
