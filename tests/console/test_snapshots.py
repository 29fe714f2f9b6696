"""Snapshots of the main screens at 80x24 and 120x40, default and monochrome themes, against the real
server with its clock frozen (``server`` fixture), so every number and time on screen is fixed."""

from __future__ import annotations

import pytest
from console_helpers import (
    TIER0_BASELINE,
    TIER1_EXPERIMENT,
    TIER2_EXPERIMENT,
    make_app,
    wait_for,
)
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
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, FleetScreen)
            and app.screen.query_one(FleetTable).row_count
            and app.me is not None
            and app.link.describe()[0] == "live"
        ),
        "the live fleet",
    )


async def _model(pilot) -> None:
    await _live_fleet(pilot)
    screen = ModelScreen(TIER1_EXPERIMENT)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and screen.series is not None, "the model view"
    )


async def _confirm(pilot) -> None:
    await _model(pilot)
    await pilot.press("e")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")


async def _sick_fallback(pilot) -> None:
    """An experiment whose baseline pages: the view says 'itself paging since …: escalate', not 'safe'."""
    await _live_fleet(pilot)
    screen = ModelScreen("fb_feed_late-stage_dhen.x7-integrity")
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: screen.detail is not None and screen.series is not None, "the model view"
    )


async def _fallback_warning(pilot) -> None:
    """The rollback of an experiment whose baseline pages: the warning first, the strongest confirmation."""
    await _sick_fallback(pilot)
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")


async def _help(pilot) -> None:
    await _model(pilot)
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "the help")


VIEWS = {
    "fleet": _live_fleet,
    "model": _model,
    "confirm": _confirm,
    "help": _help,
    "sick-fallback": _sick_fallback,
    "fallback-warning": _fallback_warning,
}


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", list(VIEWS))
def test_snapshot(server, snap_compare, view, size, theme):
    assert snap_compare(make_app(server, theme=theme), terminal_size=size, run_before=VIEWS[view])


def _at(model_id: str, key: str | None = None):
    """A model's view (and the dialog ``key`` opens on it)."""

    async def run(pilot) -> None:
        await _live_fleet(pilot)
        screen = ModelScreen(model_id)
        await pilot.app.push_screen(screen)
        await wait_for(
            pilot, lambda: screen.detail is not None and screen.series is not None, "the model view"
        )
        if key is not None:
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmAction), "the dialog")
        await pilot.pause()

    return run


AT_80X24 = {
    "paging-model": _at(TIER0_BASELINE),
    # The two dialog levels: type the variant and a reason (TIER0), or press y (TIER2).
    "type-to-confirm-tier0": _at(TIER0_BASELINE, "x"),
    "press-y-tier2": _at(TIER2_EXPERIMENT, "e"),
}


@pytest.mark.parametrize("view", list(AT_80X24))
def test_snapshot_at_80x24(server, snap_compare, view):
    assert snap_compare(make_app(server), terminal_size=(80, 24), run_before=AT_80X24[view])


@pytest.fixture(scope="module")
def large_server(tmp_path_factory):
    """The real server on the large fleet (1,200 models), seeded once for this module, frozen at the time the
    ``server`` fixture's clock is (tests/conftest.py FIXED_NOW)."""
    from datetime import UTC, datetime

    from fleetdesk.server.embedded import start_embedded

    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    embedded = start_embedded(
        "large", tmp_path_factory.mktemp("large") / "fleetdesk.sqlite", now=now
    )
    yield embedded
    embedded.stop()


SHARED_PREFIX = "ig_reels_late-stage_transformer.x1"
"""Eleven experiments whose ids start alike: cut at their end, all eleven rows read the same at 80 columns."""


async def _large_fleet_filtered(pilot) -> None:
    await _live_fleet(pilot)
    await pilot.press("slash", *SHARED_PREFIX)
    table = pilot.app.screen.query_one(FleetTable)
    await wait_for(pilot, lambda: table.row_count == 11, "the shared-prefix filter")


@pytest.mark.parametrize("view", ["whole", "shared-prefix"])
def test_snapshot_large_fleet_at_80x24(large_server, snap_compare, view):
    run_before = _large_fleet_filtered if view == "shared-prefix" else _live_fleet
    assert snap_compare(make_app(large_server), terminal_size=(80, 24), run_before=run_before)


async def _scorecard(pilot) -> None:
    from console_helpers import sample_scorecard

    from fleetdesk.console.drill.scorecard import ScorecardScreen

    await _live_fleet(pilot)
    await pilot.app.push_screen(ScorecardScreen(sample_scorecard(), []))
    await wait_for(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, ScorecardScreen)
            and pilot.app.screen.query("MarkdownTable")
        ),
        "the scorecard",
    )
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_scorecard(server, snap_compare, size):
    assert snap_compare(make_app(server), terminal_size=size, run_before=_scorecard)


@pytest.fixture
def shared_shift(server_factory, tmp_path):
    """Every stage of Instagram Feed shifts at 09:00 with healthy upstreams: one shared-cause incident."""
    from fleet_variants import FIXED_NOW, HOUR, IG_FEED, held, small_variant
    from fleetdesk.domain.fleet import IncidentKind

    incidents = [
        i
        for m in IG_FEED
        for i in held(m, IncidentKind.CALIBRATION_DRIFT, FIXED_NOW - 3 * HOUR, 3, 1.3)
    ]
    return server_factory(
        fleet=str(small_variant(tmp_path / "fleet.json", incidents=incidents, keep_incidents=False))
    )


async def _grouped_incident(pilot) -> None:
    from fleetdesk.console.screens.incident import IncidentScreen

    await _live_fleet(pilot)
    screen = IncidentScreen(1)
    await pilot.app.push_screen(screen)
    await wait_for(
        pilot, lambda: "members (6)" in str(screen.query_one("#timeline").render()), "the incident"
    )


async def _grouped_fleet(pilot) -> None:
    await _live_fleet(pilot)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", ["grouped-incident", "grouped-fleet"])
def test_grouped_snapshot(shared_shift, snap_compare, view, size, theme):
    run = {"grouped-incident": _grouped_incident, "grouped-fleet": _grouped_fleet}[view]
    assert snap_compare(make_app(shared_shift, theme=theme), terminal_size=size, run_before=run)
