"""A model id like "[bold]x" or one holding ESC shows literally in the fleet table and the model context."""

from __future__ import annotations

from console_helpers import TIER2_EXPERIMENT, screen_text
from pydantic import SecretStr
from textual.app import App, ComposeResult

from fleetdesk.client import FleetdeskClient
from fleetdesk.console.glyphs import UNICODE
from fleetdesk.console.widgets.fleet.row import shared
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.console.widgets.model.context import ModelContext

HOSTILE = "[bold]x\x1b[31m\u202eid"


class Harness(App):
    def __init__(self) -> None:
        super().__init__()
        self.glyphs = UNICODE

    def compose(self) -> ComposeResult:
        yield FleetTable(UNICODE)
        yield ModelContext()


async def test_hostile_ids_render_as_plain_escaped_text(server):
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
        row = (await client.fleet_rows()).rows[0]
        detail = await client.model(TIER2_EXPERIMENT)
    row = row._replace(id=HOSTILE, owner_team="[link=http://x]team[/link]")
    detail = detail.model_copy(update={"model": detail.model.model_copy(update={"id": HOSTILE})})
    app = Harness()
    async with app.run_test(size=(200, 20)) as pilot:
        app.query_one(FleetTable).set_models([shared(row)])
        app.query_one(ModelContext).show(detail, None, UNICODE)
        await pilot.pause()
        text = screen_text(app)
        assert "[bold]x\\x1b[31m\\u202eid" in text
        assert "\x1b" not in text and "\u202e" not in text
