"""The replay through the real backend: two drills of the same scenario store the same buckets and open the same incidents."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import FleetdeskClient
from fleetdesk.drills.replay import drill_fleet, plan_replay, replay, write_fleet
from fleetdesk.drills.scenario import load_scenario
from fleetdesk.server.embedded import start_embedded
from fleetdesk.wire import Window

TICKS = 8
WATCHED = ("ig_feed_late-stage_mtml.x1-watch-time", "ig_feed_late-stage_mtml.v41")


async def _replay_once() -> tuple[list, list]:  # type: ignore[type-arg]
    scenario, path = load_scenario("launch-ne-regression")
    fleet = drill_fleet(scenario, str(path))
    plan = plan_replay(scenario, fleet)
    plan = dataclasses.replace(plan, ticks=plan.ticks[:TICKS])
    with tempfile.TemporaryDirectory() as temp:
        server = start_embedded(
            str(write_fleet(fleet, Path(temp) / "fleet.json")), now=scenario.start
        )
        try:
            async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:

                async def send(tick):  # type: ignore[no-untyped-def]
                    await client.set_clock(tick.end)
                    await client.ingest(list(tick.buckets))

                await replay(plan, send, speed=1000.0)
                series = [await client.stability(model_id, Window.H24) for model_id in WATCHED]
                incidents = (await client.incidents()).items
        finally:
            server.stop()
    points = [
        [
            (p.start, p.weight, p.label_sum, p.prediction_sum, p.cross_entropy_sum, p.health)
            for p in s.points
            if p.start >= plan.start
        ]
        for s in series
    ]
    opened = sorted(
        (i.model_id, i.opened_at, i.severity) for i in incidents if i.opened_at >= plan.start
    )
    return points, opened


async def test_two_replays_store_the_same_buckets_and_open_the_same_incidents() -> None:
    first_points, first_incidents = await _replay_once()
    second_points, second_incidents = await _replay_once()
    assert [len(points) for points in first_points] == [TICKS, TICKS]
    assert first_points == second_points
    assert [model_id for model_id, _, _ in first_incidents] == [
        "ig_feed_late-stage_mtml.x1-watch-time"
    ]
    assert first_incidents == second_incidents
