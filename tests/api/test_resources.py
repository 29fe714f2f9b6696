"""Every read resource, through the real client against the real server on the small fleet."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fleetdesk.client import FleetdeskClient, ModelFilters, NotFound, PageRequest
from fleetdesk.domain.registry import Role, Tier
from fleetdesk.domain.stability import Health
from fleetdesk.server.embedded import EmbeddedServer
from fleetdesk.wire import AccessRole, Attention, IncidentState, ModelSort, Severity, Window

from .conftest import (
    DOWNSTREAM,
    EXPERIMENT,
    EXPERIMENT_BASELINE,
    EXPERIMENT_TEAM,
    FOUNDATION,
    Connect,
)

SMALL_FLEET_SIZE = 21


@pytest.fixture
def server(shared_server: EmbeddedServer) -> EmbeddedServer:
    """These tests only read, so they share one server."""
    return shared_server


async def test_info_and_identity(admin: FleetdeskClient, connect: Connect) -> None:
    info = await admin.info()
    assert (info.fleet, info.models, info.clock_frozen, info.api) == (
        "small",
        SMALL_FLEET_SIZE,
        True,
        "/v1",
    )
    assert info.bucket == timedelta(hours=1)
    me = await (await connect(f"oncall:{EXPERIMENT_TEAM}")).me()
    assert (me.role, me.teams, me.demo) == (AccessRole.ONCALL, [EXPERIMENT_TEAM], False)
    assert (await (await connect("viewer")).me()).role is AccessRole.VIEWER


async def test_fleet_summary_counts_every_model_and_lists_the_worst_first(
    admin: FleetdeskClient,
) -> None:
    summary = await admin.fleet_summary(limit=5)
    assert summary.total_models == SMALL_FLEET_SIZE
    assert sum(sum(by_tier.values()) for by_tier in summary.counts.values()) == SMALL_FLEET_SIZE
    assert set(summary.counts) == set(Health) and all(
        set(t) == set(Tier) for t in summary.counts.values()
    )
    assert sum(summary.attention.values()) == SMALL_FLEET_SIZE
    assert summary.open_incidents == 2
    ranks = [(m.attention.rank, m.tier.rank) for m in summary.worst]
    assert ranks == sorted(ranks) and len(summary.worst) <= 5
    assert all(m.attention is not Attention.OK for m in summary.worst)
    assert EXPERIMENT in {m.id for m in summary.worst}


async def test_list_models_filters_sorts_and_pages(admin: FleetdeskClient) -> None:
    everything = await admin.list_models(sort=ModelSort.ID, page=PageRequest(limit=1000))
    ids = [m.id for m in everything.items]
    assert everything.total == SMALL_FLEET_SIZE and ids == sorted(ids)

    first = await admin.list_models(sort=ModelSort.ID, page=PageRequest(offset=0, limit=5))
    second = await admin.list_models(sort=ModelSort.ID, page=PageRequest(offset=5, limit=5))
    assert [m.id for m in first.items + second.items] == ids[:10]
    assert (second.offset, second.limit, second.total) == (5, 5, SMALL_FLEET_SIZE)

    experiments = await admin.list_models(ModelFilters(role=Role.EXPERIMENT, app="ig"))
    assert experiments.items and all(
        m.role is Role.EXPERIMENT and m.app == "ig" for m in experiments.items
    )
    critical = await admin.list_models(ModelFilters(tier=(Tier.TIER0, Tier.TIER1)))
    assert critical.items and {m.tier for m in critical.items} <= {Tier.TIER0, Tier.TIER1}
    assert {m.tier for m in critical.items} == {Tier.TIER0, Tier.TIER1}
    feed = await admin.list_models(ModelFilters(surface="feed", q="x1-watch"))
    assert [m.id for m in feed.items] == [EXPERIMENT]
    no_data = await admin.list_models(ModelFilters(health=Health.NO_DATA))
    assert all(m.health is Health.NO_DATA for m in no_data.items)

    worst = await admin.list_models(sort=ModelSort.WORST, page=PageRequest(limit=3))
    assert worst.items[0].attention is Attention.PAGE


async def test_model_detail_decodes_the_type_and_carries_registry_context(
    admin: FleetdeskClient,
) -> None:
    detail = await admin.model(EXPERIMENT)
    assert detail.model.id == EXPERIMENT and detail.model.baseline_model_id == EXPERIMENT_BASELINE
    assert (detail.decoded.app, detail.decoded.surface, detail.decoded.architecture) == (
        "ig",
        "feed",
        "mtml",
    )
    assert detail.decoded.description
    assert detail.live.serving_model_id == EXPERIMENT
    assert detail.attention is Attention.PAGE and detail.open_incident_id is not None
    assert detail.bands.calibration_low < 1.0 < detail.bands.calibration_high


async def test_unknown_model_is_not_found_with_suggestions(admin: FleetdeskClient) -> None:
    with pytest.raises(NotFound) as caught:
        await admin.model(EXPERIMENT[:-2])
    assert EXPERIMENT in caught.value.message
    with pytest.raises(NotFound):
        await admin.lineage("no/such model")  # a slash must not reach another route


async def test_lineage_shows_upstream_chain_and_blast_radius(admin: FleetdeskClient) -> None:
    foundation = await admin.lineage(FOUNDATION)
    assert DOWNSTREAM in {entry.id for entry in foundation.downstream}
    assert set(foundation.blast_radius) == set(Tier)
    assert sum(foundation.blast_radius.values()) == len(foundation.downstream)
    downstream = await admin.lineage(DOWNSTREAM)
    assert downstream.upstream[0].id == FOUNDATION


async def test_stability_series_with_baseline_overlay(admin: FleetdeskClient) -> None:
    series = await admin.stability(EXPERIMENT, Window.H24)
    assert series.window is Window.H24 and series.end - series.start == timedelta(hours=24)
    assert 0 < len(series.points) <= 24 and series.baseline_model_id == EXPERIMENT_BASELINE
    assert series.baseline_points
    starts = [p.start for p in series.points]
    assert starts == sorted(starts) and all(series.start <= s < series.end for s in starts)
    unstable = [p for p in series.points if p.health is Health.UNSTABLE]
    assert unstable  # the experiment pages: its recent buckets are out of band
    week = await admin.stability(EXPERIMENT, Window.D7)
    assert len(week.points) > len(series.points)


async def test_slo_status_of_a_paging_model(admin: FleetdeskClient) -> None:
    status = await admin.slo(EXPERIMENT)
    assert 0 < status.objective < 1
    assert any(alert.severity is Severity.PAGE for alert in status.alerts)
    assert status.budget_remaining is not None and status.budget_remaining < 1.0
    assert status.burn_rates


async def test_incidents_list_filter_and_detail(admin: FleetdeskClient) -> None:
    open_incidents = await admin.incidents(state=IncidentState.OPEN)
    assert open_incidents.total == 2
    mine = await admin.incidents(model_id=EXPERIMENT)
    assert [i.model_id for i in mine.items] == [EXPERIMENT]
    joined = await admin.incidents(model_id=DOWNSTREAM)
    assert joined.items and DOWNSTREAM in joined.items[0].model_ids
    detail = await admin.incident(mine.items[0].id)
    assert detail.state is IncidentState.OPEN and detail.timeline
    assert detail.timeline[0].kind == "opened"
    with pytest.raises(NotFound):
        await admin.incident(999_999)


async def test_audit_is_empty_before_any_action_and_event_log_is_ordered(
    admin: FleetdeskClient, server: EmbeddedServer
) -> None:
    assert (await admin.audit()).total == 0
    log = await admin.event_log(limit=10)
    ids = [e.id for e in log.items]
    assert ids == sorted(ids) and (not ids or log.last_id == ids[-1])
    for event in log.items:
        event.payload()  # every stored event has data of its type
