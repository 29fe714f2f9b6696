"""A drill run against the real backend with actions sent through the client (no console: zero keystrokes)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from pydantic import SecretStr

from fleetdesk.client import FleetdeskClient
from fleetdesk.drills.replay import drill_fleet, plan_replay, write_fleet
from fleetdesk.drills.scenario import load_scenario
from fleetdesk.drills.session import DrillRun, save_scorecard
from fleetdesk.drills.scoring import to_markdown
from fleetdesk.server.embedded import start_embedded
from fleetdesk.wire import EscalationTarget
from fleetdesk.client import ActionIntent
from fleetdesk.wire import ActionKind

X2 = "ig_feed_late-stage_mtml.x2-long-history"


async def test_slow_ack_wrong_escalation_and_the_time_limit_are_graded(tmp_path: Path) -> None:
    scenario, path = load_scenario("experiment-calibration-drift")
    # Nobody can ack within a millisecond, and the drill ends after a few seconds without the mitigation.
    grading = scenario.grading.model_copy(update={"acknowledge_within": 0.001, "time_limit": 4.0})
    responses = [response.model_copy(update={"within": 3.0}) for response in scenario.responses]
    scenario = scenario.model_copy(update={"grading": grading, "responses": responses})
    fleet = drill_fleet(scenario, str(path))
    with tempfile.TemporaryDirectory() as temp:
        server = start_embedded(str(write_fleet(fleet, Path(temp) / "fleet.json")), now=scenario.start)
        try:
            run = DrillRun(scenario, "drift", plan_replay(scenario, fleet), server.url,
                           SecretStr(server.admin_token), speed=4.0)
            await run.start()
            async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as oncall:
                async with asyncio.timeout(10):
                    await run.paged.wait()
                await oncall.perform(ActionIntent.of(ActionKind.ACK, X2))
                await oncall.perform(ActionIntent.of(ActionKind.ESCALATE, X2, reason="blame upstream", target=EscalationTarget.UPSTREAM))
                await oncall.perform(ActionIntent.of(ActionKind.NOTE, X2, text="looking at the baseline overlay"))
                await run.wait()
                card = await run.scorecard()
        finally:
            await run.close()
            server.stop()
    assert not card.passed
    assert 3.5 <= card.duration < 8
    assert card.time_to_acknowledge is not None and card.time_to_acknowledge > 0.001
    assert any(reason.startswith("acknowledged after") and "(limit 0.001s)" in reason for reason in card.reasons)
    assert [(w.action, w.teams_paged) for w in card.wrong] == [("escalate", ["ig-foundation-models"])]
    assert "paging ig-foundation-models wakes the wrong team" in card.wrong[0].why
    assert [(a.action, a.model_id) for a in card.ungraded] == [("note", X2)]
    assert card.responses[0].met is False and card.keystrokes == 0 and card.keystrokes_to_mitigation is None
    json_path, markdown_path = save_scorecard(card, tmp_path / "cards")
    assert json_path.read_text().startswith("{") and markdown_path.read_text() == to_markdown(card)
    assert "## Wrong actions\n\n- escalate on ig_feed_late-stage_mtml.x2-long-history (paged ig-foundation-models)" \
        in to_markdown(card)
