"""A slot close judges no model before its bucket is in: no intermediate SLO state, no hourly 'alert fires' line."""

from __future__ import annotations

from pydantic import SecretStr

from fleet_variants import FIXED_NOW, HOUR, bucket
from fleetdesk.client import FleetdeskClient
from fleetdesk.wire import Attention, EventType

PAGING = (
    "ig_feed_late-stage_mtml.x1-watch-time"  # pages at FIXED_NOW (calibration drift since 03:00)
)


async def _slo_events(client: FleetdeskClient, after: int) -> list[tuple[str | None, str]]:
    page = await client.event_log(after=after)
    return [
        (e.model_id, e.data["attention"]) for e in page.items if e.type is EventType.SLO_CHANGED
    ]


async def test_the_clock_moving_leaves_a_model_as_it_was_until_its_bucket_arrives(server) -> None:
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        before = await client.model(PAGING)
        incident = await client.incident(before.open_incident_id or 0)
        assert before.attention is Attention.PAGE
        start = 0
        while (more := await client.event_log(after=start)).items:  # the log's latest id
            start = more.last_id

        await client.set_clock(FIXED_NOW + HOUR)  # the 12:00 bucket closes; it is not reported yet
        waiting = await client.model(PAGING)
        assert waiting.attention is Attention.PAGE and waiting.slo.alerts == before.slo.alerts
        assert all(
            rate.rate is not None for rate in waiting.slo.burn_rates
        )  # no window emptied by the wait
        assert (
            await _slo_events(client, start) == []
        )  # nothing changed anywhere, nothing was announced

        await client.ingest(
            [bucket(PAGING, FIXED_NOW, calibration=1.35)]
        )  # still drifting: still paging
        judged = await client.model(PAGING)
        assert (
            judged.attention is Attention.PAGE
            and judged.slo.counts.bad == before.slo.counts.bad + 1
        )
        assert await _slo_events(client, start) == []
        after = await client.incident(before.open_incident_id or 0)
        assert [e.text for e in after.timeline] == [
            e.text for e in incident.timeline
        ]  # no new "alert fires"

        await client.ingest(
            [bucket(PAGING, FIXED_NOW, calibration=1.35)]
        )  # the same bucket again: a no-op
        await client.set_clock(FIXED_NOW + 3 * HOUR)  # 13:00 and 14:00 never came: a real gap now
        gap = await client.model(PAGING)
        assert gap.health.value == "no_data" and gap.attention is not Attention.PAGE
        assert (PAGING, gap.attention.value) in await _slo_events(client, start)
