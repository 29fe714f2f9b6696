"""The console and snapshots: exporting what the live console shows (``s``), and reopening a snapshot in it.

``SnapshotConsole`` is the live console with three things swapped: the client
(a FrozenClient answering from the snapshot), the link (its status line shows
"snapshot by USER at TIME (read-only)" on every screen, where the live console
says "live"), and the settings (read-only, so no action key exists). It opens
on the screen the exporting engineer was looking at.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from dataclasses import dataclass
from pathlib import Path

from textual.widgets import Static

from fleetdesk.client import FleetdeskError
from fleetdesk.console import app as console_app
from fleetdesk.console.app import Backend, FleetdeskApp
from fleetdesk.console.config import ConsoleSettings
from fleetdesk.console.connection import Link
from fleetdesk.domain.text import sanitize
from fleetdesk.snapshot.atomic import AtomicWriteError
from fleetdesk.snapshot.bundle import Screen, Snapshot, View
from fleetdesk.snapshot.export import Bundle, ExportError, capture, seal, write_bundle
from fleetdesk.snapshot.frozen import FrozenClient
from fleetdesk.snapshot.redact import ConfigError, Redactor, configured_patterns
from fleetdesk.wire import Window

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A snapshot of a snapshot would claim a frozen screen is the live one: export from the live console.
        return False if action == "snapshot" else super().check_action(action, parameters)

    def drawn(self) -> bool:
        """True once the screen the snapshot opens on shows its data."""
        from fleetdesk.console.screens.incident import IncidentScreen

        screen = self.screen
        view = self.snapshot.view.screen
        if view is Screen.INCIDENT and self.snapshot.incident is not None:
            return isinstance(screen, IncidentScreen) and bool(str(screen.query_one("#timeline", Static).content))
        if view is Screen.FLEET:
            return bool(getattr(screen, "_loaded", False))
        return getattr(screen, "detail", None) is not None and getattr(screen, "series", None) is not None


async def screenshot(snapshot: Snapshot, size: tuple[int, int] = SCREENSHOT_SIZE) -> str:
    """The reopened console's first screen as SVG, drawn headlessly; TimeoutError if it does not finish drawing."""
    app = SnapshotConsole(snapshot)
    async with app.run_test(size=size) as pilot:
        async with asyncio.timeout(DRAW_TIMEOUT):
            while not app.drawn():
                await pilot.pause(0.05)
        await pilot.pause()
        return app.export_screenshot(title=app.client.banner)


def render_svg(sealed: Snapshot, size: tuple[int, int] = SCREENSHOT_SIZE) -> tuple[str | None, str]:
    """(SVG, "") or (None, why not): the reopened console's screen, drawn headlessly from the masked snapshot."""
    try:
        return asyncio.run(screenshot(sealed, size)), ""
    except TimeoutError:
        return None, f"the console did not finish drawing within {DRAW_TIMEOUT:g} s"
    except Exception as error:  # noqa: BLE001 - the screenshot is optional; the bundle must still be written
        return None, f"the console could not draw the snapshot ({type(error).__name__})"


async def export_screen(app: FleetdeskApp, out_dir: Path | None = None) -> Bundle:
    """Snapshot what ``app`` shows now: its screen as SVG, plus the data behind it read again through its client."""
    from fleetdesk import locations
    from fleetdesk.console.screens.fleet import FleetScreen
    from fleetdesk.console.screens.incident import IncidentScreen
    from fleetdesk.console.screens.model import ModelScreen
    from fleetdesk.console.widgets.fleet.table import FleetTable

    screen = app.screen
    svg: str | None = app.export_screenshot(title="fleetdesk")
    incident_id: int | None = None
    window = Window.H24
    if isinstance(screen, ModelScreen):
        model_id, window, shown = screen.model_id, screen.window, Screen.MODEL
        incident_id = screen.incident.id if screen.incident is not None else None
    elif isinstance(screen, IncidentScreen):
        incident_id, shown = screen.incident_id, Screen.INCIDENT
        model_id = (await app.client.incident(incident_id)).model_id
    elif isinstance(screen, FleetScreen):
        model_id, shown = screen.query_one(FleetTable).selected_id(), Screen.FLEET
    else:
        raise ExportError("open the fleet, a model or an incident first: this screen has no snapshot")
    if model_id is None:
        raise ExportError("no model is selected")
    token = app.backend.token
    redactor = Redactor([token.get_secret_value()] if token is not None else [],
                        configured_patterns(locations.config_file()))
    snapshot = await capture(app.client, app.backend.url, model_id, incident_id=incident_id,
                             windows=[window, *(item for item in Window if item is not window)],
                             view=View(screen=shown, window=window))
    sealed = seal(snapshot, redactor)
    if sealed.redactions:
        # The screen may show a secret that wrapped across lines, where no pattern can see it whole: draw the
        # same screen again from the masked data instead of keeping the live screenshot.
        svg, _ = await asyncio.to_thread(render_svg, sealed, (app.size.width, app.size.height))
    # Writing fsyncs, which can take a while on a busy disk; keep the screen responsive.
    return await asyncio.to_thread(write_bundle, sealed.model_copy(update={"screen_svg": svg}), redactor, out_dir)


def start_export(app: FleetdeskApp) -> None:
    """The console's ``s`` key: export in the background and say where the files went (or why not)."""

    async def run() -> None:
        try:
            bundle = await export_screen(app)
        except (AtomicWriteError, ExportError, ConfigError, FleetdeskError) as error:
            message = error.message if isinstance(error, FleetdeskError) else str(error)
            app.notify(sanitize(message, 500), title="snapshot not written", severity="error", markup=False)
            return
        where = "\n".join(sanitize(str(path)) for path in bundle.paths)
        app.notify(where, title="snapshot written", timeout=30, markup=False)

    app.run_worker(run(), group="snapshot", exclusive=True, exit_on_error=False)
