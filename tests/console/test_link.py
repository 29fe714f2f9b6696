"""Losing the server: the console says so, keeps the last data marked stale, disables actions, and recovers."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from console_helpers import TIER2_EXPERIMENT, make_app, screen_text, wait_for
from pydantic import SecretStr

from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.screens.model import ModelScreen
from fleetdesk.server.backend import Backend as ServerBackend
from fleetdesk.server.clock import Clock
from fleetdesk.server.embedded import start_embedded
from fleetdesk.server.runner import BackgroundServer, bind
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import ActionKind

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def test_server_stopped_and_restarted(tmp_path):
    db = tmp_path / "fleetdesk.sqlite"
    first = start_embedded("small", db, now=NOW)
    port = int(first.url.rsplit(":", 1)[1])
    app = FleetdeskApp(Backend(first.url, SecretStr(first.oncall_token)), ConsoleSettings())
    second: BackgroundServer | None = None
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = ModelScreen(TIER2_EXPERIMENT)
            await app.push_screen(screen)
            await wait_for(
                pilot,
                lambda: screen.detail is not None and app.link.describe()[0] == "live",
                "live data",
            )
            await asyncio.to_thread(first.stop)
            await wait_for(pilot, lambda: not app.link.connected, "the console to notice")
            text = screen_text(app)
            assert "disconnected since" in text and "data stale" in text
            assert TIER2_EXPERIMENT in text  # the last data stays on screen
            assert (
                screen.why_not(ActionKind.ESCALATE) == "disconnected: actions wait for the server"
            )
            assert not screen.active_bindings["x"].enabled
            # Same port, same database: the console finds it again by itself.
            backend = ServerBackend.open(db, "small", Clock(NOW))
            second = BackgroundServer(backend, bind("127.0.0.1", port))
            await asyncio.to_thread(second.start)
            await wait_for(pilot, lambda: app.link.connected, "the reconnect", deadline=40)
            await wait_for(pilot, lambda: "live" in screen_text(app), "live again")
            assert screen.why_not(ActionKind.ESCALATE) is None
    finally:
        if second is not None:
            await asyncio.to_thread(second.stop)


async def test_hostile_model_text_shows_literally(server):
    """Ids and notes from data are sanitized and never read as markup."""
    from fleetdesk.client import ActionIntent, FleetdeskClient

    note = "[bold red]boom[/] \x1b[2J\u202eevil"
    async with FleetdeskClient(server.url, SecretStr(server.oncall_token)) as client:
        await client.perform(ActionIntent.of(ActionKind.NOTE, TIER2_EXPERIMENT, text=note))
    async with make_app(server).run_test(size=(160, 50)) as pilot:
        screen = ModelScreen(TIER2_EXPERIMENT)
        await pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: screen.incident is not None, "the incident")
        await pilot.press("i")
        await wait_for(
            pilot, lambda: "[bold red]boom[/]" in screen_text(pilot.app), "the note, literally"
        )
        text = screen_text(pilot.app)
        assert "\\x1b[2J" in text and "\\u202eevil" in text
        assert "\x1b" not in text and "\u202e" not in text
