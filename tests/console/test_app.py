"""App-wide behaviour: quitting, the command palette, themes, keymap and config file."""

from __future__ import annotations

from console_helpers import TIER2_EXPERIMENT, make_app, wait_for

from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.screens.quit import QuitScreen
from fleetdesk.settings import locations
from fleetdesk.settings.console import load_settings


async def test_ctrl_c_never_quits_and_q_asks_first(server):
    app = make_app(server)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet")
        await pilot.press("ctrl+c")
        assert app.is_running and isinstance(app.screen, FleetScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), "the quit question")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "back to the fleet")
        assert app.is_running
        await pilot.press("q", "y")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_palette_lists_every_action_and_the_themes(server):
    app = make_app(server)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ModelScreen(TIER2_EXPERIMENT)
        await app.push_screen(screen)
        await wait_for(pilot, lambda: screen.detail is not None and app.me is not None, "the model")
        titles = [command.title for command in app.get_system_commands(screen)]
        for expected in (
            "Rollback (r)",
            "End exp (e)",
            "Escalate (x)",
            "Halt (h)",
            "Ack (a)",
            "Note (n)",
            "Theme: fleetdesk-light",
            "Theme: fleetdesk-monochrome",
            "Theme: fleetdesk-high-contrast",
        ):
            assert expected in titles, titles
        command = next(
            c for c in app.get_system_commands(screen) if c.title == "Theme: fleetdesk-light"
        )
        command.callback()
        assert app.theme == "fleetdesk-light"


async def test_keymap_from_the_config_file_remaps_by_binding_id(server):
    path = locations.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('theme = "fleetdesk-high-contrast"\n[keymap]\nrollback = "R"\n')
    settings = load_settings(ascii=None)
    assert settings.keymap == {"rollback": "R"}
    assert (
        load_settings(theme="fleetdesk-light").theme == "fleetdesk-light"
    )  # flags win over the file
    app = make_app(server, **settings.model_dump())
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.theme == "fleetdesk-high-contrast"
        screen = ModelScreen(TIER2_EXPERIMENT)
        await app.push_screen(screen)
        await wait_for(pilot, lambda: screen.detail is not None and app.me is not None, "the model")
        await pilot.press("R")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConfirmAction), "the rollback dialog via R"
        )
        assert app.screen.kind.value == "rollback"
