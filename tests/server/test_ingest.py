"""Metric ingestion over HTTP: validation, per-bucket idempotency, conflicts, and incidents it opens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from fleetdesk.server.embedded import EmbeddedServer

from .helpers import assert_problem, auth, get

HEALTHY = "ig_notifications_late-stage_mtml.v15"
FIXED_NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the server fixture's frozen time


def _post(
    server: EmbeddedServer, buckets: list[dict], who: str = "admin", key: str | None = None
) -> httpx.Response:
    import uuid

    return httpx.post(
        f"{server.url}/v1/metrics",
        json={"buckets": buckets},
        headers=auth(server, who, key or uuid.uuid4().hex),
        timeout=10,
    )


def _advance(server: EmbeddedServer, hours: int) -> None:
    import uuid

    now = FIXED_NOW + timedelta(hours=hours)
    response = httpx.put(
        f"{server.url}/v1/clock",
        json={"now": now.isoformat()},
        headers=auth(server, "admin", uuid.uuid4().hex),
        timeout=10,
    )
    assert response.status_code == 200, response.text
    assert response.json()["now"].startswith(now.strftime("%Y-%m-%dT%H:%M"))


def _bucket(start, calibration: float = 1.0, model_id: str = HEALTHY) -> dict:  # noqa: ANN001
    # 10,000 events at a 10% positive rate; NE ~0.8 keeps it inside typical bands.
    return {
        "model_id": model_id,
        "start": start.isoformat(),
        "weight": 10000.0,
        "label_sum": 1000.0,
        "prediction_sum": 1000.0 * calibration,
        "cross_entropy_sum": 2600.0,
    }


def test_buckets_must_be_known_aligned_and_closed(server: EmbeddedServer) -> None:
    body = assert_problem(
        _post(
            server,
            [
                _bucket(FIXED_NOW - timedelta(hours=1), model_id="nope"),
                _bucket(FIXED_NOW - timedelta(minutes=30)),
                _bucket(FIXED_NOW),
            ],
        ),
        422,
        "validation",
    )
    messages = [e["message"] for e in body["errors"]]
    assert any("unknown model" in m for m in messages)
    assert any("not aligned" in m for m in messages)
    assert any("not closed" in m for m in messages)


def test_only_admin_ingests(server: EmbeddedServer) -> None:
    _advance(server, 1)
    response = _post(server, [_bucket(FIXED_NOW)], who="oncall")
    assert assert_problem(response, 403, "forbidden")["missing_permission"] == "ingest"


def test_same_bucket_twice_is_a_no_op_other_sums_are_409(server: EmbeddedServer) -> None:
    _advance(server, 1)
    first = _post(server, [_bucket(FIXED_NOW)])
    assert first.status_code == 200, first.text
    assert first.json()["accepted"] == 1
    again = _post(server, [_bucket(FIXED_NOW)])  # new key, same bucket
    assert again.json() == {
        **first.json(),
        "accepted": 0,
        "unchanged": 1,
        "unstable": [],
        "incident_ids": [],
    }
    conflict = assert_problem(
        _post(server, [_bucket(FIXED_NOW, calibration=1.01)]), 409, "bucket-conflict"
    )
    assert conflict["conflicts"][0]["model_id"] == HEALTHY
    series = get(server, f"/v1/models/{HEALTHY}/stability", window="1h").json()
    assert [p["prediction_sum"] for p in series["points"]] == [1000.0]


def test_an_unstable_bucket_opens_an_incident_and_emits_events(server: EmbeddedServer) -> None:
    before = get(server, f"/v1/models/{HEALTHY}").json()
    assert before["open_incident_id"] is None and before["health"] == "stable"
    start_id = get(server, "/v1/events/log", after=0, limit=500).json()["last_id"]
    _advance(server, 1)
    result = _post(server, [_bucket(FIXED_NOW, calibration=2.0)]).json()
    assert result["unstable"] == [HEALTHY] and len(result["incident_ids"]) == 1
    detail = get(server, f"/v1/models/{HEALTHY}").json()
    assert (
        detail["health"] == "unstable" and detail["open_incident_id"] == result["incident_ids"][0]
    )
    incident = get(server, f"/v1/incidents/{result['incident_ids'][0]}").json()
    assert incident["state"] == "open" and incident["timeline"][0]["kind"] == "opened"
    types = [
        e["type"] for e in get(server, "/v1/events/log", after=start_id, limit=500).json()["items"]
    ]
    assert {"clock", "bucket.closed", "slo.changed", "incident.opened"} <= set(types)
    # One stable bucket later the ticket alert (6h short window) still fires: still open.
    _advance(server, 2)
    _post(server, [_bucket(FIXED_NOW + timedelta(hours=1))])
    assert get(server, f"/v1/models/{HEALTHY}").json()["attention"] == "ticket"
    assert get(server, f"/v1/incidents/{result['incident_ids'][0]}").json()["state"] == "open"
    # Once six stable hours have pushed the bad slice out of every short window, it resolves.
    _advance(server, 8)
    _post(server, [_bucket(FIXED_NOW + timedelta(hours=h)) for h in range(2, 8)])
    assert get(server, f"/v1/models/{HEALTHY}").json()["attention"] == "ok"
    incident = get(server, f"/v1/incidents/{result['incident_ids'][0]}").json()
    assert incident["state"] == "resolved" and incident["timeline"][-1]["kind"] == "resolved"
