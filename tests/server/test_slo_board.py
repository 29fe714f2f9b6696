"""The server's one-pass SLO state equals the domain's own evaluation, model by model."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest

from fleetdesk.domain.slo import SliceHealth, evaluate
from fleetdesk.fleets import load_fleet

from .helpers import get

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("now", [NOW, NOW + timedelta(minutes=30)], ids=["on-boundary", "mid-bucket"])
def test_slo_status_matches_domain_evaluate(server_factory, now: datetime) -> None:  # noqa: ANN001
    server = server_factory(now=now)
    fleet = load_fleet("small", end_at=now)
    slices: dict[str, list[SliceHealth]] = defaultdict(list)
    for model_id, bucket in fleet.all_buckets():
        slices[model_id].append(SliceHealth(start=bucket.start, health=fleet.bands_for(model_id).health(bucket)))
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
