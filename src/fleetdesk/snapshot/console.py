"""The console on a snapshot: the same screens, read-only, over a FrozenClient; and headless screenshots of it.

``SnapshotConsole`` is the live console with three things swapped: the client
(a FrozenClient answering from the snapshot), the link (its status line shows
"snapshot by USER at TIME (read-only)" on every screen, where the live console
says "live"), and the settings (read-only, so no action key exists). It opens
on the screen the exporting engineer was looking at.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from fleetdesk.console import app as console_app
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.config import ConsoleSettings
from fleetdesk.console.connection import Link
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


class SnapshotConsole(FleetdeskApp):
    """The console over frozen data: no action keys, a banner saying whose snapshot from when."""

    # Textual resolves a relative CSS_PATH beside the subclass; the styles live beside the console app.
    CSS_PATH = Path(console_app.__file__).with_name("app.tcss")

    def __init__(self, snapshot: Snapshot, settings: ConsoleSettings | None = None) -> None:
        settings = (settings or ConsoleSettings()).model_copy(update={"read_only": True})
        super().__init__(Backend(snapshot.server.url, None, label="snapshot"), settings)
        self.snapshot = snapshot
        self.client = FrozenClient(snapshot)  # type: ignore[assignment]
        self.link = FrozenLink(banner=self.client.banner)
        self.sub_title = self.client.banner

    def on_ready(self) -> None:
        """After the console's own start (fleet screen first), open the screen the exporter was on."""
        from fleetdesk.console.screens.incident import IncidentScreen
        from fleetdesk.console.screens.model import ModelScreen

        view = self.snapshot.view.screen
        if view in (Screen.MODEL, Screen.INCIDENT):
            model = ModelScreen(self.snapshot.model_id)
            model.window = self.snapshot.view.window
            self.push_screen(model)
        if view is Screen.INCIDENT and self.snapshot.incident is not None:
            self.push_screen(IncidentScreen(self.snapshot.incident.id))

    def drawn(self) -> bool:
        """True once the screen the snapshot opens on shows its data."""
        screen = self.screen
        if self.snapshot.view.screen is Screen.FLEET or not self.snapshot.model_id:
            return getattr(screen, "_loaded", False)
        detail = getattr(screen, "detail", None)
        series = getattr(screen, "series", None)
        return detail is not None and series is not None


async def screenshot(snapshot: Snapshot, size: tuple[int, int] = SCREENSHOT_SIZE) -> str:
    """The reopened console's first screen as SVG, drawn headlessly; TimeoutError if it does not finish drawing."""
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=size) as pilot:
        async with asyncio.timeout(DRAW_TIMEOUT):
            while not app.drawn():
                await pilot.pause(0.05)
        await pilot.pause()
        return app.export_screenshot(title=app.client.banner)


def render_svg(sealed: Snapshot) -> tuple[str | None, str]:
    """(SVG, "") or (None, why not): the screenshot a CLI export carries, drawn from the masked snapshot."""
    try:
        return asyncio.run(screenshot(sealed)), ""
    except TimeoutError:
        return None, f"the console did not finish drawing within {DRAW_TIMEOUT:g} s"
    except Exception as error:  # noqa: BLE001 - the screenshot is optional; the bundle must still be written
        return None, f"the console could not draw the snapshot ({type(error).__name__})"
