"""App-wide behaviour: quitting, the command palette, themes, keymap and config file."""

from __future__ import annotations

import socket

from console_helpers import TIER2_EXPERIMENT, make_app, screen_text, wait_for
from pydantic import SecretStr

from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.screens.confirm import ConfirmAction
from fleetdesk.console.screens.fleet import FleetScreen
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.console.screens.quit import QuitScreen
from fleetdesk.settings import locations
from fleetdesk.settings.console import ConsoleSettings, load_settings


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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


async def test_on_started_runs_once_when_the_first_page_is_on_screen_or_has_failed(server):
    """The console command turns the garbage collector back on from this hook: it must come once, after the
    worst models are on screen, and also when the server cannot be reached (or the collector stays off)."""
    seen: list[str] = []

    def started() -> None:
        seen.append(screen_text(app))

    app = FleetdeskApp(
        Backend(server.url, SecretStr(server.tokens["oncall"])), ConsoleSettings(), started
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: seen, "the start to end")
        await pilot.press("R")  # a reload: not a second start
        await wait_for(pilot, lambda: "21 models" in screen_text(app), "the whole fleet")
    assert len(seen) == 1 and TIER2_EXPERIMENT in seen[0], seen

    failed: list[bool] = []
    app = FleetdeskApp(
        Backend(f"http://127.0.0.1:{closed_port()}", SecretStr("x")),
        ConsoleSettings(),
        lambda: failed.append(True),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: failed, "the failed start to end")
    assert failed == [True]
