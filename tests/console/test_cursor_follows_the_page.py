"""The cursor follows the worst: a new page sorting to the top takes the cursor (so Enter opens what pages),
unless the engineer has just moved it; ``p`` goes to the worst page from anywhere, through a filter."""

from __future__ import annotations

from datetime import timedelta

from console_helpers import make_app, screen_text, wait_for
from pydantic import SecretStr
from textual.widgets import Input

from fleetdesk.client import FleetdeskClient
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.wire import Attention, IngestBucket

NEW_PAGE = "ig_cross-surface_late-stage_transformer.fm-v7"
"""TIER0 and healthy in the small fleet: five bad hours make it the fleet's worst page."""


async def make_it_page(server, model_id: str = NEW_PAGE, hours: int = 5) -> None:
    """Five unstable hours for one model (calibration 2.0), as a real feed of buckets would bring them."""
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as admin:
        now = (await admin.info()).now
        await admin.set_clock(now + timedelta(hours=hours))
        await admin.ingest(
            [
                IngestBucket(
                    model_id=model_id,
                    start=now + timedelta(hours=hour),
                    weight=10_000.0,
                    label_sum=1_000.0,
                    prediction_sum=2_000.0,
                    cross_entropy_sum=2_600.0,
                )
                for hour in range(hours)
            ]
        )


async def live_fleet(pilot) -> FleetTable:
    app = pilot.app
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, FleetScreen)
            and app.screen.query_one(FleetTable).row_count
            and app.link.describe()[0] == "live"
        ),
        "the live fleet",
    )
    return app.screen.query_one(FleetTable)


async def test_a_new_page_at_the_top_takes_the_cursor_and_enter_opens_it(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        table = await live_fleet(pilot)
        before = table.selected_id()
        assert table.models[before].attention is Attention.PAGE and before != NEW_PAGE
        await make_it_page(server)
        await wait_for(
            pilot, lambda: table.shown_ids[0] == NEW_PAGE, "the new page to sort to the top"
        )
        assert table.selected_id() == NEW_PAGE
        assert (
            pilot.app.screen.query_one(StatusLine).note == f"new page: {NEW_PAGE} (Enter opens it)"
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ModelScreen), "the model view")
        assert pilot.app.screen.model_id == NEW_PAGE


async def test_a_cursor_the_engineer_just_moved_stays_and_p_goes_to_the_page(server):
    async with make_app(server, cursor_hold_seconds=600).run_test(size=(80, 24)) as pilot:
        table = await live_fleet(pilot)
        await pilot.press("down", "down")
        chosen = table.selected_id()
        await make_it_page(server)
        await wait_for(
            pilot, lambda: table.shown_ids[0] == NEW_PAGE, "the new page to sort to the top"
        )
        assert table.selected_id() == chosen, "the cursor left the row the engineer had just chosen"
        status = pilot.app.screen.query_one(StatusLine).note
        assert status == f"new page: {NEW_PAGE} (p goes to it)"
        await pilot.press("p")
        assert table.selected_id() == NEW_PAGE


async def test_p_goes_to_the_worst_page_through_a_filter_that_hides_it(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        table = await live_fleet(pilot)
        worst = table.shown_ids[0]
        await pilot.press("slash", *"t4", "enter")
        await wait_for(
            pilot, lambda: worst not in table.shown_ids, "the filter to hide the worst page"
        )
        await pilot.press("p")
        assert table.selected_id() == worst and table.row_count == len(table.models)
        assert pilot.app.screen.query_one("#filter", Input).value == ""
        await wait_for(
            pilot,
            lambda: "esc Clear" not in screen_text(pilot.app).splitlines()[-1],
            "Esc to drop off",
        )
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: "worst-page" in screen_text(pilot.app), "the key in the help")
