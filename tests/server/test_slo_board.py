"""The server's one-pass SLO state equals the domain's own evaluation, model by model."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest

from fleetdesk.domain.slo import SliceHealth, evaluate
from fleetdesk.fleets import load_fleet

from .helpers import get

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "now", [NOW, NOW + timedelta(minutes=30)], ids=["on-boundary", "mid-bucket"]
)
def test_slo_status_matches_domain_evaluate(server_factory, now: datetime) -> None:  # noqa: ANN001
    server = server_factory(now=now)
    fleet = load_fleet("small", end_at=now)
    slices: dict[str, list[SliceHealth]] = defaultdict(list)
    for model_id, bucket in fleet.all_buckets():
        slices[model_id].append(
            SliceHealth(start=bucket.start, health=fleet.bands_for(model_id).health(bucket))
        )
    for model_id in fleet.registry.models:
        expected = evaluate(slices[model_id], now, fleet.file.slo)
        served = get(server, f"/v1/models/{model_id}/slo").json()
        assert served["counts"] == expected.counts.model_dump(), model_id
        assert served["budget_remaining"] == pytest.approx(expected.budget_remaining), model_id
        rates = {item["window"]: item["rate"] for item in served["burn_rates"]}
        for rate in expected.burn_rates:
            window = get_iso(rate.window)
            assert rates[window] == pytest.approx(rate.rate), (model_id, window)
        assert [a["rule"] for a in served["alerts"]] == [a.rule for a in expected.alerts], model_id
        # Health is the latest closed bucket's (one bucket late is tolerated); a stopped feed is no data.
        by_start = {s.start: s.health.value for s in slices[model_id]}
        last = now.replace(minute=0) - timedelta(hours=1)
        expected_health = by_start.get(last) or by_start.get(last - timedelta(hours=1)) or "no_data"
        assert get(server, f"/v1/models/{model_id}").json()["health"] == expected_health, model_id


def get_iso(window: timedelta) -> str:
    from pydantic import TypeAdapter

    return TypeAdapter(timedelta).dump_python(window, mode="json")


def test_advanced_counts_equal_a_full_recount(server_factory) -> None:  # noqa: ANN001
    import json
    import uuid

    import httpx

    from fleetdesk.server import slo_board

    server = server_factory(now=NOW)
    backend = server.backend
    model = "ig_notifications_late-stage_mtml.v15"
    headers = {"Authorization": f"Bearer {server.admin_token}"}
    for hours in (1, 2, 3, 9, 40):  # single slots and multi-slot jumps
        backend.clock.set(NOW + timedelta(hours=hours))
        if hours == 3:  # a late bucket and a fresh one, between two slot closes
            buckets = [
                {
                    "model_id": model,
                    "start": (NOW + timedelta(hours=h)).isoformat(),
                    "weight": 10000.0,
                    "label_sum": 1000.0,
                    "prediction_sum": 2000.0,
                    "cross_entropy_sum": 2600.0,
                }
                for h in (0, 2)
            ]
            response = httpx.post(
                f"{server.url}/v1/metrics",
                json={"buckets": buckets},
                headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
            )
            assert response.status_code == 200, response.text
        assert backend.refresh_if_due()
        now = backend.clock.now()
        with backend.store.read() as conn:
            stored = {
                row["id"]: (json.loads(row["slo"]), row["health"], row["attention"])
                for row in conn.execute("SELECT id, slo, health, attention FROM models")
            }
            recount = slo_board.assess(
                conn, backend.config, backend.registry, backend.model_keys, now
            )
        for item in recount:
            slo, health, attention = stored[item.model_id]
            expected = json.loads(item.slo_json)
            assert slo == expected, (hours, item.model_id)
            assert (health, attention) == (item.health.value, item.attention.value), (
                hours,
                item.model_id,
            )
    with (
        backend.store.read() as conn
    ):  # the per-day counts ingest maintains equal a recount of the buckets
        days = {tuple(row) for row in conn.execute("SELECT * FROM health_days")}
        recounted = {
            tuple(row)
            for row in conn.execute(
                "SELECT model_key, start / 86400, sum(CASE WHEN health = 0 THEN 1 ELSE 0 END),"
                " sum(CASE WHEN health = 1 THEN 1 ELSE 0 END), sum(CASE WHEN health = 2 THEN 1 ELSE 0 END)"
                " FROM buckets GROUP BY model_key, start / 86400"
            )
        }
    assert days == recounted
