"""Snapshots of the main screens at 80x24 and 120x40, default and monochrome themes, against the real
server with its clock frozen (``server`` fixture), so every number and time on screen is fixed."""

from __future__ import annotations

import pytest
from console_helpers import TIER1_EXPERIMENT, make_app, wait_for
from textual.widgets import Input

from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.help import HelpScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.widgets.fleet.table import FleetTable

SIZES = [(80, 24), (120, 40)]
THEMES = ["fleetdesk-dark", "fleetdesk-monochrome"]


async def _live_fleet(pilot) -> None:
    Input.cursor_blink = False
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen) and app.screen.query_one(FleetTable).row_count
                   and app.me is not None and app.link.describe()[0] == "live", "the live fleet")


async def _model(pilot) -> None:
    await _live_fleet(pilot)
    screen = ModelScreen(TIER1_EXPERIMENT)
    await pilot.app.push_screen(screen)
    await wait_for(pilot, lambda: screen.detail is not None and screen.series is not None, "the model view")


async def _confirm(pilot) -> None:
    await _model(pilot)
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")


async def _fallback_warning(pilot) -> None:
    """The rollback of an experiment whose baseline pages: the warning first, the strongest confirmation."""
    await _live_fleet(pilot)
    screen = ModelScreen("fb_feed_late-stage_dhen.x7-integrity")
    await pilot.app.push_screen(screen)
    await wait_for(pilot, lambda: screen.detail is not None and screen.series is not None, "the model view")
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")


async def _help(pilot) -> None:
    await _model(pilot)
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "the help")


VIEWS = {"fleet": _live_fleet, "model": _model, "confirm": _confirm, "help": _help,
         "fallback-warning": _fallback_warning}


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", list(VIEWS))
def test_snapshot(server, snap_compare, view, size, theme):
    assert snap_compare(make_app(server, theme=theme), terminal_size=size, run_before=VIEWS[view])


@pytest.fixture
def shared_shift(server_factory, tmp_path):
    """Every stage of Instagram Feed shifts at 09:00 with healthy upstreams: one shared-cause incident."""
    from fleet_variants import FIXED_NOW, HOUR, IG_FEED, held, small_variant

    from fleetdesk.domain.fleet import IncidentKind

    incidents = [i for m in IG_FEED for i in held(m, IncidentKind.CALIBRATION_DRIFT, FIXED_NOW - 3 * HOUR, 3, 1.3)]
    return server_factory(fleet=str(small_variant(tmp_path / "fleet.json", incidents=incidents, keep_incidents=False)))


async def _grouped_incident(pilot) -> None:
    from fleetdesk.console.screens.incident import IncidentScreen

    await _live_fleet(pilot)
    screen = IncidentScreen(1)
    await pilot.app.push_screen(screen)
    await wait_for(pilot, lambda: "members (6)" in str(screen.query_one("#timeline").render()), "the incident")


async def _grouped_fleet(pilot) -> None:
    await _live_fleet(pilot)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", ["grouped-incident", "grouped-fleet"])
def test_grouped_snapshot(shared_shift, snap_compare, view, size, theme):
    run = {"grouped-incident": _grouped_incident, "grouped-fleet": _grouped_fleet}[view]
    assert snap_compare(make_app(shared_shift, theme=theme), terminal_size=size, run_before=run)
