"""The model view says where a launch stands and since when, in one line at 80x24, and follows a phase change
made through the registry API while it is open."""

from __future__ import annotations

from console_helpers import make_app, screen_text, wait_for
from pydantic import SecretStr

from fleetdesk.client import ConnectionState, FleetdeskClient, RegistryIntent
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.domain.registry import LaunchPhase

EXPERIMENT = (
    "ig_feed_late-stage_mtml.x2-long-history"  # an experiment in estimation on 2% of traffic
)
NEVER = 3600.0
"""The console's own poll, far beyond the test: only the live event can bring the change."""


async def test_the_model_view_shows_the_launch_phase_and_since_when(server):
    app = make_app(server, poll_seconds=NEVER)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, FleetScreen) and app.screen.query_one(FleetTable).row_count
            ),
            "the fleet table to fill",
        )
        fleet = app.screen.query_one(FleetTable)
        fleet.move_cursor(row=fleet.shown_ids.index(EXPERIMENT))
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ModelScreen) and app.screen.detail is not None,
            "the model view",
        )
        await wait_for(pilot, lambda: app.link.feed is ConnectionState.LIVE, "the live feed")
        lines = screen_text(app).splitlines()
        # Seeded in estimation: where it stands, without a since the seed cannot tell.
        assert any(line.strip().startswith("launch estimation, 2% of traffic · ") for line in lines)

        async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
            now = (await admin.info()).now
            record = await admin.registry_model(EXPERIMENT)
            approval = record.model_copy(update={"launch_phase": LaunchPhase.APPROVAL})
            await admin.change_registry(RegistryIntent.update(approval, "estimate reviewed"))
        await wait_for(
            pilot,
            lambda: app.screen.detail.live.launch_phase is LaunchPhase.APPROVAL,
            "the view's new phase",
        )
        await pilot.pause()
        expected = f"launch approval since {now:%m-%d %H:%M}, 2% of traffic · "
        assert any(line.strip().startswith(expected) for line in screen_text(app).splitlines())
