"""The audit log screen: every record whole, however the paints fall."""

from __future__ import annotations

from console_helpers import screen_text, wait_for
from network import HoldingProxy
from pydantic import SecretStr
from textual.geometry import Region
from textual.widgets import DataTable

from fleetdesk.client import ActionIntent, FleetdeskClient, PageRequest
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.messages import AuditLoaded
from fleetdesk.console.screens.audit import AuditScreen
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import ActionKind

MODEL = "ig_feed_late-stage_mtml.x2-long-history"
REASON = "calibration drifted after the 02:10 deploy, watching"


async def test_a_paint_between_the_rows_and_the_next_idle_still_shows_each_cell_whole(server):
    """Under load the table can be painted after its rows arrive and before it measures them (when it next
    idles); the cells painted then must not stay cut to the header's width ("admin" for "admin (admin)")."""
    async with FleetdeskClient(server.url, SecretStr(server.admin_token)) as client:
        await client.perform(
            ActionIntent.of(ActionKind.NOTE, MODEL, text="watching", reason=REASON)
        )
        page = await client.audit(model_id=MODEL, page=PageRequest(limit=10))
    proxy = await HoldingProxy(server.url).start()
    app = FleetdeskApp(Backend(proxy.url, SecretStr(server.oncall_token)), ConsoleSettings())
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: app.me is not None, "the console to connect")
            proxy.hold(
                reads=True
            )  # the screen's own first load stays away: these rows are its first
            screen = AuditScreen(MODEL)
            await app.push_screen(screen)
            table = screen.query_one(DataTable)
            screen.on_audit_loaded(AuditLoaded(page))  # the rows arrive ...
            table.render_lines(
                Region(0, 0, table.size.width, table.size.height)
            )  # ... a paint at once
            await pilot.pause()
            shown = screen_text(app)
            assert f"{page.items[0].actor} (admin)" in shown, shown
            assert REASON in shown, shown
    finally:
        await proxy.stop()
