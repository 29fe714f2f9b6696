"""The server pages by tier policy: the same bad hour pages a TIER0 model and tickets a TIER4 one, a held
ticket waits for its team's working hours, and a slice too sparse to judge is no data."""

from __future__ import annotations

from typing import Any

import pytest

from fleet_variants import FIXED_NOW, HOUR, bucket, held, small_variant
from fleetdesk.domain.fleet import IncidentKind
from fleetdesk.wire import Attention, Health, IncidentState, Severity

TAGGING = "ig_tagging_late-stage_dlrm.v6"  # TIER4, ig-tagging-ranking, 40,000 events an hour
FEED = "ig_feed_late-stage_mtml.v41"  # TIER0 baseline
PAGE_REASON = "pages: TIER0 policy, page-fast 100x ≥ 14.4x"


def _policy(policy: dict[str, Any]):  # type: ignore[no-untyped-def]
    def change(raw: dict[str, Any]) -> None:
        raw["policy"] = policy

    return change


@pytest.fixture
def bad_hour(server_factory, tmp_path):  # type: ignore[no-untyped-def]
    """The small fleet where one TIER4 and one TIER0 model had one bad hour, 11:00-12:00, and nothing else;
    FIXED_NOW (Monday 12:00 UTC) is 21:00 in Tokyo, where the tagging team works."""
    incidents = [
        *held(TAGGING, IncidentKind.CALIBRATION_DRIFT, FIXED_NOW - HOUR, 1, 1.4),
        *held(FEED, IncidentKind.CALIBRATION_DRIFT, FIXED_NOW - HOUR, 1, 1.4),
    ]
    fleet = small_variant(
        tmp_path / "fleet.json",
        incidents=incidents,
        keep_incidents=False,
        change=_policy({"team_timezones": {"ig-tagging-ranking": "Asia/Tokyo"}}),
    )
    return server_factory(fleet=str(fleet))


async def test_a_tier4_bad_hour_opens_a_ticket_held_for_working_hours(bad_hour, connect) -> None:
    client = await connect(url=bad_hour.url, token=bad_hour.tokens["admin"])
    tagging = await client.model(TAGGING)
    assert tagging.health is Health.UNSTABLE
    assert "page-fast" in {a.rule for a in tagging.slo.alerts}  # the same burn as a TIER0 model's
    assert tagging.attention is Attention.TICKET
    assert tagging.paging is not None and tagging.paging.severity is Severity.TICKET
    reason = "ticket: TIER4 policy, page-fast 100x ≥ 14.4x (TIER4 never pages)"
    assert tagging.paging.reason == f"{reason}, held for working hours until Tue 09:00 Asia/Tokyo"
    incident = await client.incident(tagging.open_incident_id or 0)
    assert incident.severity is Severity.TICKET and incident.state is IncidentState.OPEN
    assert incident.title == f"{TAGGING}: {tagging.paging.reason}"


async def test_a_tier0_bad_hour_pages_and_says_why(bad_hour, connect) -> None:
    client = await connect(url=bad_hour.url, token=bad_hour.tokens["admin"])
    feed = await client.model(FEED)
    assert feed.attention is Attention.PAGE
    assert feed.paging is not None and feed.paging.reason == PAGE_REASON
    incident = await client.incident(feed.open_incident_id or 0)
    assert incident.severity is Severity.PAGE
    assert incident.title == f"{FEED}: {PAGE_REASON}"


async def test_a_slice_sparser_than_its_tier_allows_is_no_data_not_bad(
    server_factory, tmp_path, connect
) -> None:
    fleet = small_variant(
        tmp_path / "fleet.json",
        keep_incidents=False,
        change=_policy({"tiers": {"TIER4": {"min_events_per_slice": 1000}}}),
    )
    server = server_factory(fleet=str(fleet))
    client = await connect(url=server.url, token=server.tokens["admin"])
    before = await client.model(TAGGING)
    assert before.bands.min_events == 1000 and before.health is Health.STABLE
    await client.set_clock(FIXED_NOW + HOUR)
    # Twelve events, every one wrong: judged, it would be a bad hour; it is too sparse to say anything.
    await client.ingest([bucket(TAGGING, FIXED_NOW, calibration=2.0, weight=12)])
    sparse = await client.model(TAGGING)
    assert sparse.health is Health.NO_DATA
    assert sparse.attention is Attention.NO_DATA and sparse.open_incident_id is None
    assert sparse.slo.counts.bad == 0
    # The same signals with enough events are a bad slice (a ticket, as TIER4).
    await client.set_clock(FIXED_NOW + 2 * HOUR)
    await client.ingest([bucket(TAGGING, FIXED_NOW + HOUR, calibration=2.0, weight=40_000)])
    judged = await client.model(TAGGING)
    assert judged.health is Health.UNSTABLE and judged.slo.counts.bad == 1
    assert judged.attention is Attention.TICKET
