"""One cause, one incident: models of one surface whose trouble began together share a shared-cause incident that one
acknowledgement and one escalation cover; upstream-caused trouble joins the upstream's incident; unrelated models and
later starts stay separate."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fleet_variants import FIXED_NOW, HOUR, IG_FEED, held, small_variant
from fleetdesk.client import ActionIntent, AlreadyAcknowledged
from fleetdesk.domain.fleet import IncidentKind
from fleetdesk.wire import ActionKind, EscalationTarget, IncidentCause, IncidentState

from .conftest import Connect
from .test_fleet_rows import assert_rows_match_listing

SOURCING = "ig_feed_sourcing_two-tower.v9"  # upstream fm-v3 (healthy), team ig-feed-retrieval
HOLDOUT = "ig_feed_late-stage_mtml.holdout-2026h2"
TAGGING = "ig_tagging_late-stage_dlrm.v6"  # Instagram, another surface
NINE = FIXED_NOW - 3 * HOUR


def _shifted(model_id: str, start, hours: int = 3):  # type: ignore[no-untyped-def]
    return held(model_id, IncidentKind.CALIBRATION_DRIFT, start, hours, 1.3)


@pytest.fixture
def shared_shift(server_factory, tmp_path):  # type: ignore[no-untyped-def]
    """Five Feed models shift at 09:00, the retrieval model an hour later, the holdout two hours later; Tagging
    (same app, another surface) at 09:00 too. Nothing else is wrong in the fleet."""
    incidents = [i for m in IG_FEED if m not in (SOURCING, HOLDOUT) for i in _shifted(m, NINE)]
    incidents += (
        _shifted(SOURCING, NINE + HOUR, 2)
        + _shifted(HOLDOUT, NINE + 2 * HOUR, 1)
        + _shifted(TAGGING, NINE)
    )
    return server_factory(
        fleet=str(small_variant(tmp_path / "fleet.json", incidents=incidents, keep_incidents=False))
    )


async def test_a_one_surface_shift_with_a_healthy_upstream_is_one_incident(
    shared_shift, connect: Connect
) -> None:
    client = await connect(url=shared_shift.url, token=shared_shift.tokens["admin"])
    page = await client.incidents()
    by_model = {model_id: incident for incident in page.items for model_id in incident.model_ids}
    group = by_model["ig_feed_late-stage_mtml.v41"]
    assert group.cause is IncidentCause.SHARED and group.group is not None
    assert (group.group.app, group.group.surface, group.group.label) == (
        "ig",
        "feed",
        "Instagram · Feed",
    )
    assert group.group.started_at == NINE and group.group.note == "shared cause suspected"
    members = [m for m in IG_FEED if m != HOLDOUT]
    assert sorted(group.model_ids) == sorted(
        members
    )  # the retrieval model a bucket later joined too
    assert group.title == "Instagram · Feed: 5 models unstable together, shared cause suspected"
    # Two buckets after the first: its own incident; another surface: its own too.
    assert by_model[HOLDOUT].id != group.id and by_model[HOLDOUT].cause is IncidentCause.OWN
    assert by_model[TAGGING].model_ids == [TAGGING] and by_model[TAGGING].group is None
    assert len(page.items) == 3

    detail = await client.incident(group.id)
    assert [m.model_id for m in detail.members] == group.model_ids
    assert {m.stage.value for m in detail.members} == {
        "sourcing",
        "early-stage ranking",
        "late-stage ranking",
    }
    # The same shift pages the TIER0-TIER2 members; TIER3's policy tickets it (x2-long-history).
    assert all(
        m.open and m.attention.value == ("page" if m.tier.rank <= 2 else "ticket")
        for m in detail.members
    )
    assert {m.attention.value for m in detail.members} == {"page", "ticket"}
    joined = [e for e in detail.timeline if e.kind == "joined"]
    assert len(joined) == 4 and all(
        "within a bucket of the others on Instagram · Feed, upstream healthy" in e.text
        for e in joined
    )
    summary = await client.model(SOURCING)
    assert summary.open_incident_id == group.id
    rows = {row.id: row for row in (await client.list_models()).items}
    assert rows[SOURCING].incident_group == group.group and rows[HOLDOUT].incident_group is None
    table = {row.id: row for row in await assert_rows_match_listing(client)}
    assert (table[SOURCING].group_label, table[SOURCING].group_started) == (
        "Instagram · Feed",
        NINE,
    )
    assert table[HOLDOUT].group_label is None


async def test_one_ack_and_one_escalation_cover_the_group(shared_shift, connect: Connect) -> None:
    client = await connect(url=shared_shift.url, token=shared_shift.tokens["admin"])
    incident_id = (await client.model(SOURCING)).open_incident_id
    await client.perform(ActionIntent.of(ActionKind.ACK, "ig_feed_late-stage_mtml.x2-long-history"))
    for model_id in IG_FEED:
        if model_id == HOLDOUT:
            continue
        detail = await client.model(model_id)
        ack = next(o for o in detail.actions if o.kind is ActionKind.ACK)
        assert not ack.available and ack.reason == "already acknowledged by admin"
        escalate = next(o for o in detail.actions if o.kind is ActionKind.ESCALATE)
        assert escalate.target is EscalationTarget.SURFACE
    with pytest.raises(AlreadyAcknowledged):
        await client.perform(ActionIntent.of(ActionKind.ACK, SOURCING))

    intent = ActionIntent.of(
        ActionKind.ESCALATE,
        SOURCING,
        reason="every Feed stage shifted at 09:00",
        target=EscalationTarget.SURFACE,
    )
    result = await client.perform(intent)
    assert [(p.team, p.rotation, p.incident_id) for p in result.pages] == [
        ("ig-data-pipelines", "ig-data-pipelines-oncall", incident_id)
    ]
    assert result.summary.startswith(
        f"Paged ig-data-pipelines (ig-data-pipelines-oncall) about incident #{incident_id}"
        " (5 models of Instagram · Feed, shared cause suspected)"
    )
    again = next(
        o
        for o in (await client.model("ig_feed_late-stage_mtml.v41")).actions
        if o.kind is ActionKind.ESCALATE
    )
    assert again.warnings and again.warnings[0].startswith(
        f"incident #{incident_id} was already escalated by admin"
    )
    incident = await client.incident(incident_id or 0)
    assert (
        incident.state is IncidentState.ACKNOWLEDGED
        and sum(e.kind == "action" for e in incident.timeline) == 1
    )


async def test_without_a_pipeline_rotation_the_groups_teams_are_paged(
    server_factory, tmp_path, connect: Connect
) -> None:
    def no_pipelines(raw: dict) -> None:
        raw["pipelines"] = {}

    incidents = [i for m in IG_FEED for i in _shifted(m, NINE)]
    running = server_factory(
        fleet=str(
            small_variant(
                tmp_path / "fleet.json",
                incidents=incidents,
                keep_incidents=False,
                change=no_pipelines,
            )
        )
    )
    client = await connect(url=running.url, token=running.tokens["admin"])
    preview = await client.perform(
        ActionIntent.of(
            ActionKind.ESCALATE,
            "ig_feed_late-stage_mtml.v41",
            dry_run=True,
            reason="shared",
            target=EscalationTarget.SURFACE,
        )
    )
    assert sorted(p.team for p in preview.pages) == ["ig-feed-ranking", "ig-feed-retrieval"]


async def test_upstream_caused_trouble_joins_the_upstream_and_the_rest_stays_apart(
    server_factory, tmp_path, connect: Connect
) -> None:
    foundation = "ig_cross-surface_late-stage_transformer.fm-v7"
    incidents = held(foundation, IncidentKind.NE_REGRESSION, NINE - HOUR, 4, 1.3)
    incidents += [
        i
        for m in ("ig_feed_late-stage_mtml.v41", "ig_feed_early-stage_dlrm.v18")
        for i in held(m, IncidentKind.NE_REGRESSION, NINE, 3, 1.25)
    ]
    incidents += _shifted(SOURCING, NINE)  # its upstream (fm-v3) is healthy
    running = server_factory(
        fleet=str(small_variant(tmp_path / "fleet.json", incidents=incidents, keep_incidents=False))
    )
    client = await connect(url=running.url, token=running.tokens["admin"])
    items = (await client.incidents()).items
    upstream = next(i for i in items if i.model_id == foundation)
    assert upstream.cause is IncidentCause.UPSTREAM and upstream.group is None
    assert sorted(upstream.model_ids) == sorted(
        [foundation, "ig_feed_late-stage_mtml.v41", "ig_feed_early-stage_dlrm.v18"]
    )
    own = next(i for i in items if SOURCING in i.model_ids)
    assert own.model_ids == [SOURCING] and own.cause is IncidentCause.OWN
    assert len(items) == 2
    assert timedelta(0) <= FIXED_NOW - upstream.opened_at
