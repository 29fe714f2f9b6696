"""Nothing covers the work at 80x24: notices sit in the status line's row, clear of the charts' newest
buckets, of every dialog and of the drill scorecard; the scorecard is its Markdown page rendered (data
escaped, never a link); the key bar says when keys did not fit."""

from __future__ import annotations

import pytest
from console_helpers import (
    HOSTILE_ID,
    TIER2_EXPERIMENT,
    make_app,
    sample_scorecard,
    screen_text,
    wait_for,
)
from textual.geometry import Region
from textual.widgets import Markdown
from textual.widgets._toast import Toast

from fleetdesk.console.drill.scorecard import ScorecardScreen
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.help import HelpScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.screens.quit import QuitScreen
from fleetdesk.console.widgets.common.footer import KeyFooter
from fleetdesk.console.widgets.common.status import StatusLine
from fleetdesk.console.widgets.fleet.table import FleetTable
from fleetdesk.console.widgets.model.chart import StabilityChart
from fleetdesk.drills.scoring import to_markdown

LONG_NOTICE = (
    "Experiment calibration drift: metrics replay at 1 bucket(s) per second. Respond to the page as on "
    "call; the drill ends when you have, or with q."
)


async def live_fleet(pilot) -> None:
    app = pilot.app
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, FleetScreen)
            and app.screen.query_one(FleetTable).row_count
            and app.me is not None
        ),
        "the live fleet",
    )


async def open_model(pilot) -> ModelScreen:
    await live_fleet(pilot)
    pilot.app.screen.query_one(FleetTable).select(TIER2_EXPERIMENT)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, ModelScreen) and pilot.app.screen.series is not None,
        "the model view",
    )
    return pilot.app.screen


async def notice(pilot, severity: str = "information") -> Region:
    """Post the drill's start notice and return where it is drawn."""
    pilot.app.notify(
        LONG_NOTICE, title="Drill started", severity=severity, timeout=30, markup=False
    )
    await wait_for(
        pilot,
        lambda: pilot.app.screen.query(Toast) and pilot.app.screen.query_one(Toast).region,
        "the notice on screen",
    )
    await pilot.pause()
    return pilot.app.screen.query_one(Toast).region


def status_row(app) -> int:
    return app.size.height - 2


def visible(widget) -> Region:
    """The part of a widget on screen (a chart in a scrolled body may be partly below the fold)."""
    return widget.screen.find_widget(widget).visible_region


async def test_a_notice_on_the_model_view_keeps_to_the_status_line_row(server):
    async with make_app(server).run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_model(pilot)
        where = await notice(pilot)
        assert (
            where.height == 1
            and where.y == status_row(pilot.app) == screen.query_one(StatusLine).region.y
        )
        for chart in screen.query(StabilityChart):
            assert not where.overlaps(visible(chart)), f"the notice covers {chart.id}"
        assert not where.overlaps(screen.query_one(KeyFooter).region)
        link_words = screen.query_one(StatusLine).region.x + 1 + len(pilot.app.link.describe()[0])
        assert where.x > link_words, "the notice covers the link state"
        assert "Drill started: Experiment calibration drift" in screen_text(pilot.app)


@pytest.mark.parametrize(
    "key, dialog",
    [("e", ConfirmAction), ("q", QuitScreen), ("question_mark", HelpScreen)],
    ids=["confirm", "quit", "help"],
)
async def test_a_notice_never_covers_an_open_dialog(server, key, dialog):
    async with make_app(server).run_test(size=(80, 24), notifications=True) as pilot:
        await open_model(pilot)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, dialog), dialog.__name__)
        where = await notice(pilot, severity="error")
        box = visible(pilot.app.screen.query_one(".dialog"))
        assert not where.overlaps(box), f"the notice at {where} covers the dialog at {box}"
        assert where.y == status_row(pilot.app)


async def test_the_scorecard_is_rendered_markdown_with_its_data_escaped_and_no_notice_over_it(
    server,
):
    async with make_app(server).run_test(size=(80, 24), notifications=True) as pilot:
        await live_fleet(pilot)
        await pilot.app.push_screen(ScorecardScreen(sample_scorecard(), []))
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, ScorecardScreen)
                and pilot.app.screen.query(Markdown)
                and "Expected responses" in screen_text(pilot.app)
            ),
            "the scorecard",
        )
        text = screen_text(pilot.app)
        assert "|---|" not in text and "# Drill scorecard" not in text and "## " not in text
        assert "Drill scorecard: Experiment | calibration [drift]" in text
        body = pilot.app.screen.query_one("ScorecardScreen > VerticalScroll")
        body.scroll_end(animate=False, immediate=True)
        await wait_for(
            pilot, lambda: "The story" in screen_text(pilot.app), "the end of the scorecard"
        )
        assert "# not a heading" in screen_text(pilot.app) and "- not a list" in screen_text(
            pilot.app
        )
        markdown = pilot.app.screen.query_one(Markdown)
        assert "[click](http://evil.example)" in to_markdown(sample_scorecard()).replace("\\", "")
        # The id with "|" stays one table cell, its link text literal.
        cells = [cell.visual.plain for cell in markdown.query("MarkdownTableCellContents")]  # type: ignore[attr-defined]
        assert any(HOSTILE_ID in cell for cell in cells), cells
        where = await notice(pilot)
        scroll = visible(body)
        assert not where.overlaps(scroll)


async def test_the_key_bar_says_more_keys_exist_when_they_do_not_fit(server):
    async with make_app(server).run_test(size=(80, 24)) as pilot:
        await open_model(pilot)
        await wait_for(
            pilot, lambda: "? more" in screen_text(pilot.app).splitlines()[-1], "the more key"
        )
        footer = screen_text(pilot.app).splitlines()[-1]
        assert "esc Back" in footer and "^p" not in footer
        await pilot.resize_terminal(160, 30)
        await wait_for(
            pilot, lambda: "? Keys" in screen_text(pilot.app).splitlines()[-1], "every key at 160"
        )
        footer = screen_text(pilot.app).splitlines()[-1]
        assert all(f"{key} " in footer for key in "wils")
        await pilot.resize_terminal(80, 24)
        await wait_for(
            pilot, lambda: "? more" in screen_text(pilot.app).splitlines()[-1], "the more key again"
        )


async def test_of_notices_in_a_burst_the_newest_shows_in_the_status_row(server):
    # Failures come in bursts (the fleet, identity and the live feed all get the same 401): two notices in one
    # line's room pushed each other out of sight.
    async with make_app(server).run_test(size=(100, 30), notifications=True) as pilot:
        await live_fleet(pilot)
        pilot.app.notify(
            "token expired", title="not signed in (401)", severity="error", markup=False
        )
        pilot.app.notify(
            "token expired, again", title="not signed in (401)", severity="error", markup=False
        )
        await wait_for(
            pilot,
            lambda: "not signed in (401): token expired, again" in screen_text(pilot.app),
            "the newest notice",
        )
        assert (
            screen_text(pilot.app).splitlines()[status_row(pilot.app)].count("not signed in") == 1
        )
