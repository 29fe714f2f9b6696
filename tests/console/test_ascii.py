"""``--ascii`` is ASCII: every screen, dialog, notice, scrollbar, border and key of the console, drawn with
ASCII only (a terminal or font without box, block or braille glyphs), at 80x24 and 120x40."""

from __future__ import annotations

import pytest
from console_helpers import TIER2_EXPERIMENT, make_app, sample_scorecard, screen_text, wait_for
from textual.widgets import Input

from fleetdesk.console.drill.scorecard import ScorecardScreen
from fleetdesk.console.screens.audit import AuditScreen
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.help import HelpScreen
from fleetdesk.console.screens.incident import IncidentScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.screens.record import RecordScreen
from fleetdesk.console.widgets.fleet.table import FleetTable

SIZES = [(80, 24), (120, 40)]


def not_ascii(app) -> list[str]:
    """Lines of the current screen holding a character outside ASCII, the characters marked."""
    return [
        f"{line!r}: {sorted({c for c in line if not c.isascii()})}"
        for line in screen_text(app).splitlines()
        if not line.isascii()
    ]


async def fleet(pilot):
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


async def model(pilot):
    await fleet(pilot)
    table = pilot.app.screen.query_one(FleetTable)
    table.select(TIER2_EXPERIMENT)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, ModelScreen) and pilot.app.screen.series is not None,
        "the model view",
    )


async def on_model(pilot, key: str, screen: type) -> None:
    await model(pilot)
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen), f"the {screen.__name__}")
    await pilot.pause()


STEPS = {
    "fleet": fleet,
    "filter": lambda pilot: _then(fleet(pilot), pilot, "slash", *"feed"),
    "help": lambda pilot: _then(fleet(pilot), pilot, "question_mark"),
    "quit": lambda pilot: _then(fleet(pilot), pilot, "q"),
    "palette": lambda pilot: _then(fleet(pilot), pilot, "ctrl+p"),
    "notice": lambda pilot: _notice(pilot),
    "model": model,
    "confirm": lambda pilot: on_model(pilot, "e", ConfirmAction),
    "note": lambda pilot: on_model(pilot, "n", ConfirmAction),
    "incident": lambda pilot: on_model(pilot, "i", IncidentScreen),
    "audit": lambda pilot: on_model(pilot, "l", AuditScreen),
    "record": lambda pilot: on_model(pilot, "p", RecordScreen),
    "model-help": lambda pilot: on_model(pilot, "question_mark", HelpScreen),
    "scorecard": lambda pilot: _scorecard(pilot),
}


async def _scorecard(pilot):
    await fleet(pilot)
    await pilot.app.push_screen(ScorecardScreen(sample_scorecard(), []))
    await wait_for(pilot, lambda: "Expected responses" in screen_text(pilot.app), "the scorecard")


async def _then(before, pilot, *keys):
    await before
    await pilot.press(*keys)
    await pilot.pause(0.1)


async def _notice(pilot):
    await fleet(pilot)
    pilot.app.notify("a notice — with its title", title="Something happened", severity="error")
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("step", list(STEPS))
async def test_every_screen_is_ascii(server, step, size):
    async with make_app(server, ascii=True).run_test(size=size, notifications=True) as pilot:
        await STEPS[step](pilot)
        assert not not_ascii(pilot.app), "\n".join(not_ascii(pilot.app))


def test_each_character_becomes_ascii_of_its_own_width():
    from rich.cells import cell_len

    from fleetdesk.console.ascii import to_ascii

    for text, expected in (
        ("╭──╮", "+--+"),
        ("│ x │", "| x |"),
        ("╰─┴─╯", "+-+-+"),
        ("▁▂▇█▌", "     "),
        ("José", "Jose"),
        ("界", "??"),
        ("‼ page", "! page"),
        ("a\u0301b", "ab"),
        ("⣿⠀", ". "),
        ("fleetdesk · fleet…", "fleetdesk | fleet."),
    ):
        assert to_ascii(text) == expected
        assert cell_len(to_ascii(text)) == cell_len(text)
