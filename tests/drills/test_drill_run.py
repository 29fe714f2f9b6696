"""A drill run against the real backend with actions sent through the client (no console: zero keystrokes)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import ActionIntent, EventUpdate, FleetdeskClient
from fleetdesk.drills.replay import drill_fleet, plan_replay, write_fleet
from fleetdesk.drills.scenario import load_scenario
from fleetdesk.drills.scoring import to_markdown
from fleetdesk.drills.session import DrillRun, save_scorecard
from fleetdesk.server.embedded import start_embedded
from fleetdesk.wire import ActionKind, EscalationTarget, EventType

X2 = "ig_feed_late-stage_mtml.x2-long-history"


async def test_slow_ack_wrong_escalation_and_the_time_limit_are_graded(tmp_path: Path) -> None:
    scenario, path = load_scenario("experiment-calibration-drift")
    # Nobody can ack within a millisecond, and the drill ends after a few seconds without the mitigation.
    grading = scenario.grading.model_copy(update={"acknowledge_within": 0.001, "time_limit": 4.0})
    responses = [response.model_copy(update={"within": 3.0}) for response in scenario.responses]
    scenario = scenario.model_copy(update={"grading": grading, "responses": responses})
    fleet = drill_fleet(scenario, str(path))
    with tempfile.TemporaryDirectory() as temp:
        server = start_embedded(
            str(write_fleet(fleet, Path(temp) / "fleet.json")), now=scenario.start
        )
        try:
            run = DrillRun(
                scenario,
                "drift",
                plan_replay(scenario, fleet),
                server.url,
                SecretStr(server.admin_token),
                speed=4.0,
            )
            await run.start()
            async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as oncall:
                async with asyncio.timeout(10):
                    await run.paged.wait()
                await oncall.perform(ActionIntent.of(ActionKind.ACK, X2))
                await oncall.perform(
                    ActionIntent.of(
                        ActionKind.ESCALATE,
                        X2,
                        reason="blame upstream",
                        target=EscalationTarget.UPSTREAM,
                    )
                )
                await oncall.perform(
                    ActionIntent.of(ActionKind.NOTE, X2, text="looking at the baseline overlay")
                )
                await run.wait()
                card = await run.scorecard()
        finally:
            await run.close()
            server.stop()
    assert not card.passed
    assert 3.5 <= card.duration < 8
    assert card.time_to_acknowledge is not None and card.time_to_acknowledge > 0.001
    assert any(
        reason.startswith("acknowledged after") and "(limit 0.001s)" in reason
        for reason in card.reasons
    )
    assert [(w.action, w.teams_paged) for w in card.wrong] == [
        ("escalate", ["ig-foundation-models"])
    ]
    assert "paging ig-foundation-models wakes the wrong team" in card.wrong[0].why
    assert [(a.action, a.model_id) for a in card.ungraded] == [("note", X2)]
    assert (
        card.responses[0].met is False
        and card.keystrokes == 0
        and card.keystrokes_to_mitigation is None
    )
    json_path, markdown_path = save_scorecard(card, tmp_path / "cards")
    assert json_path.read_text().startswith("{") and markdown_path.read_text() == to_markdown(card)
    assert (
        "## Wrong actions\n\n- escalate on ig_feed_late-stage_mtml.x2-long-history (paged ig-foundation-models)"
        in to_markdown(card)
    )


async def test_the_drill_starts_after_the_logs_latest_event_so_seeded_incidents_are_not_its_page() -> (
    None
):
    # unhealthy-fallback seeds a baseline that pages since before the drill: its incident is in the log at start.
    scenario, path = load_scenario("unhealthy-fallback")
    fleet = drill_fleet(scenario, str(path))
    with tempfile.TemporaryDirectory() as temp:
        server = start_embedded(
            str(write_fleet(fleet, Path(temp) / "fleet.json")), now=scenario.start
        )
        run = DrillRun(
            scenario,
            "fallback",
            plan_replay(scenario, fleet),
            server.url,
            SecretStr(server.admin_token),
            speed=0.001,
        )  # the replay never gets to send a tick
        try:
            async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
                seeded = (await admin.event_log(after=0, limit=500)).items
                assert any(e.type.value == "incident.opened" for e in seeded)
                await run.start()
                assert run._start_event_id == seeded[-1].id == await admin.latest_event_id()  # noqa: SLF001
                sick = "ig_reels_late-stage_dhen.v23"
                assert [i.model_ids for i in run.open_at_start] == [[sick]]
                assert (
                    not run.paged.is_set()
                )  # v23 is not the drill's page: the experiment's, later, will be
                card = await run.scorecard()
        finally:
            await run.close()
            server.stop()
    assert card.first_page is None and card.incidents[0].opened_after is None


async def test_a_second_escalation_and_any_other_change_are_wrong_when_the_scenario_says_so() -> (
    None
):
    scenario, path = load_scenario("surface-shared-cause")
    fleet = drill_fleet(scenario, str(path))
    v41, v9, x1 = (
        "ig_feed_late-stage_mtml.v41",
        "ig_feed_sourcing_two-tower.v9",
        "ig_feed_late-stage_mtml.x1-watch-time",
    )
    with tempfile.TemporaryDirectory() as temp:
        server = start_embedded(
            str(write_fleet(fleet, Path(temp) / "fleet.json")), now=scenario.start
        )
        run = DrillRun(
            scenario,
            "shared",
            plan_replay(scenario, fleet),
            server.url,
            SecretStr(server.admin_token),
            speed=4.0,
        )
        try:
            await run.start()
            async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as oncall:
                async with asyncio.timeout(20):
                    feed = oncall.events(last_event_id=0)
                    async for (
                        update
                    ) in feed:  # the retrieval model joins the group a bucket after the others
                        if (
                            isinstance(update, EventUpdate)
                            and update.event.type is EventType.INCIDENT_UPDATED
                            and v9 in update.event.data["incident"]["model_ids"]
                        ):
                            break
                    await feed.aclose()
                await oncall.perform(ActionIntent.of(ActionKind.ACK, v41))
                for model_id in (v41, v9):
                    await oncall.perform(
                        ActionIntent.of(
                            ActionKind.ESCALATE,
                            model_id,
                            reason="label join",
                            target=EscalationTarget.SURFACE,
                        )
                    )
                await oncall.perform(
                    ActionIntent.of(
                        ActionKind.HALT_LAUNCH,
                        x1,
                        reason="just in case",
                        expected_serving_model_id=x1,
                    )
                )
                card = await run.scorecard()
        finally:
            await run.close()
            server.stop()
    assert (
        card.responses[0].met
        and card.responses[0].by is not None
        and card.responses[0].by.model_id == v41
    )
    assert [(w.action, w.model_id) for w in card.wrong] == [("escalate", v9), ("halt-launch", x1)]
    assert card.wrong[0].why.startswith("escalate-pipeline was already done (escalate on " + v41)
    assert card.wrong[1].why == scenario.other_actions_why
    assert not card.passed and len([r for r in card.reasons if r.startswith("wrong action")]) == 2
