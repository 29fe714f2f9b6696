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
                row["id"]: (_timeless(row["slo"]), row["health"], row["attention"])
                for row in conn.execute("SELECT id, slo, health, attention FROM models")
            }
            recount = slo_board.assess(
                conn, backend.config, backend.registry, backend.model_keys, now
            )
        for item in recount:
            slo, health, attention = stored[item.model_id]
            assert slo == _timeless(item.slo_json), (hours, item.model_id)
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


def _ingest(server, starts_by_model: dict[str, list[datetime]]) -> None:  # noqa: ANN001
    """Store a bucket per (model, start): every third model's unstable (calibration 2), the rest stable."""
    import uuid

    import httpx

    buckets = [
        {
            "model_id": model_id,
            "start": start.isoformat(),
            "weight": 100_000.0,
            "label_sum": 3_500.0,
            "prediction_sum": 7_000.0 if index % 3 == 0 else 3_500.0,
            "cross_entropy_sum": 12_000.0,
        }
        for index, (model_id, starts) in enumerate(sorted(starts_by_model.items()))
        for start in starts
    ]
    response = httpx.post(
        f"{server.url}/v1/metrics",
        json={"buckets": buckets},
        headers={
            "Authorization": f"Bearer {server.admin_token}",
            "Idempotency-Key": uuid.uuid4().hex,
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text


def _timeless(slo_json: str) -> dict:
    """A stored SLO status without the moment it was evaluated at: a pass rewrites only what changed."""
    import json

    status = json.loads(slo_json)
    del status["evaluated_at"]
    return status


def _assert_stored_state_is_a_full_recount(backend) -> None:  # noqa: ANN001
    from fleetdesk.server import slo_board
    from fleetdesk.server.store import buckets

    now = backend.clock.now()
    with backend.store.read() as conn:
        stored = {
            row["id"]: (_timeless(row["slo"]), row["health"], row["attention"])
            for row in conn.execute("SELECT id, slo, health, attention FROM models")
        }
        recount = slo_board.assess(conn, backend.config, backend.registry, backend.model_keys, now)
        logged, forgotten = buckets.log_position(conn)
    assert recount, "every model awaits its bucket: the pass judged nobody"
    for item in recount:
        slo, health, attention = stored[item.model_id]
        assert slo == _timeless(item.slo_json), item.model_id
        assert (health, attention) == (item.health.value, item.attention.value), item.model_id
    assert logged == forgotten > 0  # the pass counted in every logged bucket and forgot them


def test_a_slot_close_counts_in_the_buckets_that_arrived_after_the_last_one(server_factory) -> None:  # noqa: ANN001
    """How buckets really arrive: each a little after its slot closed, so at every slot close every model
    has a bucket the held counts lack (and some are late by more). The pass counts them in from the ingest
    log, and what it stores equals a full recount."""
    server = server_factory(now=NOW)
    backend = server.backend
    models = sorted(backend.registry.models)
    prompt = set(models[::2])  # the other half come an hour late at 13:00
    hour = timedelta(hours=1)
    backend.clock.set(NOW + hour)
    backend.refresh_if_due()  # the 12:00 slot closed; its buckets are not in yet
    # In since: 12:00 for every model, and 13:00 (closed at 14:00) for the prompt ones.
    backend.clock.set(NOW + 2 * hour)
    _ingest(server, {m: [NOW, NOW + hour] if m in prompt else [NOW] for m in models})
    backend.refresh_if_due()
    _assert_stored_state_is_a_full_recount(backend)
    # A tardy model's 13:00 bucket comes an hour late, beside everyone's 14:00.
    backend.clock.set(NOW + 3 * hour)
    _ingest(
        server,
        {m: [NOW + 2 * hour] if m in prompt else [NOW + hour, NOW + 2 * hour] for m in models},
    )
    backend.refresh_if_due()
    _assert_stored_state_is_a_full_recount(backend)


def test_the_leader_counts_in_what_another_replica_ingested(
    server_factory,  # noqa: ANN001
    new_database,  # noqa: ANN001
    store_kind: str,
) -> None:
    if store_kind != "postgresql":
        pytest.skip("replicas share a PostgreSQL database")
    database = new_database()
    leader = server_factory(db_path=database, now=NOW)
    other = server_factory(db_path=database, now=NOW)
    assert leader.backend.refresh_if_due(force=True) and not other.backend.refresh_if_due(
        force=True
    )
    models = sorted(leader.backend.registry.models)
    hour = timedelta(hours=1)
    for server in (leader, other):
        server.backend.clock.set(NOW + hour)
    leader.backend.refresh_if_due()
    for server in (leader, other):
        server.backend.clock.set(NOW + 2 * hour)
    _ingest(other, {m: [NOW, NOW + hour] for m in models})
    leader.backend.refresh_if_due()
    _assert_stored_state_is_a_full_recount(leader.backend)


def test_a_recount_rewrites_only_the_models_whose_judgement_changed(server_factory) -> None:  # noqa: ANN001
    """A full recount (start-up, a new leader, a registry change) finds most of the fleet as it was: those
    rows are not written again (at 50,000 models the writes were a third of it), and their status still
    reads as evaluated at the recount."""
    import json

    server = server_factory(now=NOW)
    backend = server.backend
    models = sorted(backend.registry.models)
    stale = models[len(models) // 2]
    with backend.write() as conn:  # a judgement the recount must correct
        conn.execute(
            "UPDATE models SET budget_remaining = -7.0, alerts = '[\"made-up\"]' WHERE id = ?",
            (stale,),
        )
    later = NOW + timedelta(minutes=30)  # the same slot: every window holds the same slices
    backend.clock.set(later)
    assert backend.refresh_if_due(force=True)
    with backend.store.read() as conn:
        stored = {
            row["id"]: (json.loads(row["slo"]), row["budget_remaining"], json.loads(row["alerts"]))
            for row in conn.execute("SELECT id, slo, budget_remaining, alerts FROM models")
        }
    moments = {model_id: slo["evaluated_at"] for model_id, (slo, _, _) in stored.items()}
    assert moments[stale] == "2026-11-30T12:30:00Z"
    slo, budget, alerts = stored[stale]
    assert (budget, alerts) == (slo["budget_remaining"], [a["rule"] for a in slo["alerts"]])
    kept = [model_id for model_id in models if model_id != stale]
    assert {moments[model_id] for model_id in kept} == {"2026-11-30T12:00:00Z"}
    for model_id in kept[:3]:
        served = get(server, f"/v1/models/{model_id}/slo").json()
        assert served["evaluated_at"] == "2026-11-30T12:30:00Z"
        assert _timeless(json.dumps(served)) == _timeless(json.dumps(stored[model_id][0]))
