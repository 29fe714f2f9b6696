"""The console and snapshots: exporting what the live console shows (``s``), and reopening a snapshot in it.

``SnapshotConsole`` is the live console with three things swapped: the client
(a FrozenClient answering from the snapshot), the link (its status line shows
"snapshot by USER at TIME (read-only)" on every screen, where the live console
says "live"), and the settings (read-only, so no action key exists). It opens
on the screen the exporting engineer was looking at.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from textual.widgets import Static

from fleetdesk.console.connection import Link
from fleetdesk.console.core import Backend, ConsoleApp
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.snapshot.bundle import Screen, Snapshot
from fleetdesk.snapshot.frozen import FrozenClient

SCREENSHOT_SIZE = (120, 40)
DRAW_TIMEOUT = 20.0


@dataclass
class FrozenLink(Link):
    """A link that never goes stale: its words are the snapshot banner."""

    banner: str = ""

    def describe(self) -> tuple[str, bool]:
        return self.banner, True


class SnapshotConsole(ConsoleApp):
    """The console over frozen data: no action keys, a banner saying whose snapshot from when."""

    def __init__(self, snapshot: Snapshot, settings: ConsoleSettings | None = None) -> None:
        settings = (settings or ConsoleSettings()).model_copy(update={"read_only": True})
        super().__init__(Backend(snapshot.server.url, None, label="snapshot"), settings)
        self.snapshot = snapshot
        self.frozen = FrozenClient(snapshot)
        self.client = self.frozen  # type: ignore[assignment]  # answers the console's reads alike
        self.link = FrozenLink(banner=self.frozen.banner)
        self.sub_title = self.frozen.banner
        self.chart_window = snapshot.view.window  # the model view reopens as it was exported

    def on_ready(self) -> None:
        """After the console's own start (fleet screen first), open the screen the exporter was on."""
        from fleetdesk.console.screens.incident import IncidentScreen
        from fleetdesk.console.screens.model import ModelScreen

        view = self.snapshot.view.screen
        if view in (Screen.MODEL, Screen.INCIDENT):
            self.push_screen(ModelScreen(self.snapshot.model_id))
        if view is Screen.INCIDENT and self.snapshot.incident is not None:
            self.push_screen(IncidentScreen(self.snapshot.incident.id))

    def server_now(self) -> datetime:
        """The moment of the export, for every 'ago' on a frozen screen."""
        return self.snapshot.server.info.now

    def drawn(self) -> bool:
        """True once the screen the snapshot opens on shows its data."""
        from fleetdesk.console.screens.incident import IncidentScreen

        screen = self.screen
        view = self.snapshot.view.screen
        if view is Screen.INCIDENT and self.snapshot.incident is not None:
            return isinstance(screen, IncidentScreen) and bool(
                str(screen.query_one("#timeline", Static).content)
            )
        if view is Screen.FLEET:
            return bool(getattr(screen, "_loaded", False))
        return (
            getattr(screen, "detail", None) is not None
            and getattr(screen, "series", None) is not None
        )


async def screenshot(snapshot: Snapshot, size: tuple[int, int] = SCREENSHOT_SIZE) -> str:
    """The reopened console's first screen as SVG, drawn headlessly; TimeoutError if it does not finish drawing."""
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=size) as pilot:
        async with asyncio.timeout(DRAW_TIMEOUT):
            while not app.drawn():
                await pilot.pause(0.05)
        await pilot.pause()
        return app.export_screenshot(title=app.frozen.banner)


def render_svg(sealed: Snapshot, size: tuple[int, int] = SCREENSHOT_SIZE) -> tuple[str | None, str]:
    """(SVG, "") or (None, why not): the reopened console's screen, drawn headlessly from the masked snapshot."""
    try:
        return asyncio.run(screenshot(sealed, size)), ""
    except TimeoutError:
        return None, f"the console did not finish drawing within {DRAW_TIMEOUT:g} s"
    except Exception as error:  # noqa: BLE001 - the screenshot is optional; the bundle must still be written
        return None, f"the console could not draw the snapshot ({type(error).__name__})"
