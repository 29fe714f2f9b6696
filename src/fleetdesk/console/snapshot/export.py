"""The console's ``s`` key: snapshot what it shows now, in the background, and say where the files went."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fleetdesk.client import FleetdeskError
from fleetdesk.console.core import ConsoleApp
from fleetdesk.console.snapshot.app import render_svg
from fleetdesk.domain.text import sanitize
from fleetdesk.snapshot.atomic import AtomicWriteError
from fleetdesk.snapshot.bundle import Screen, View
from fleetdesk.snapshot.export import Bundle, ExportError, capture, seal, write_bundle
from fleetdesk.snapshot.redact import ConfigError, Redactor, configured_patterns
from fleetdesk.wire import Window


async def export_screen(app: ConsoleApp, out_dir: Path | None = None) -> Bundle:
    """Snapshot what ``app`` shows now: its screen as SVG, plus the data behind it read again through its client."""
    from fleetdesk.console.screens.fleet import FleetScreen
    from fleetdesk.console.screens.incident import IncidentScreen
    from fleetdesk.console.screens.model import ModelScreen
    from fleetdesk.console.widgets.fleet.table import FleetTable
    from fleetdesk.settings import locations

    screen = app.screen
    svg: str | None = app.export_screenshot(title="fleetdesk")
    incident_id: int | None = None
    model_id: str | None
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
        raise ExportError(
            "open the fleet, a model or an incident first: this screen has no snapshot"
        )
    if model_id is None:
        raise ExportError("no model is selected")
    token = app.backend.token
    redactor = Redactor(
        [token.get_secret_value()] if token is not None else [],
        configured_patterns(locations.config_file()),
    )
    snapshot = await capture(
        app.client,
        app.backend.url,
        model_id,
        incident_id=incident_id,
        windows=[window, *(item for item in Window if item is not window)],
        view=View(screen=shown, window=window),
    )
    sealed = seal(snapshot, redactor)
    if sealed.redactions:
        # The screen may show a secret that wrapped across lines, where no pattern can see it whole: draw the
        # same screen again from the masked data instead of keeping the live screenshot.
        svg, _ = await asyncio.to_thread(render_svg, sealed, (app.size.width, app.size.height))
    # Writing fsyncs, which can take a while on a busy disk; keep the screen responsive.
    return await asyncio.to_thread(
        write_bundle, sealed.model_copy(update={"screen_svg": svg}), redactor, out_dir
    )


def start_export(app: ConsoleApp) -> None:
    """The console's ``s`` key: export in the background and say where the files went (or why not)."""

    async def run() -> None:
        try:
            bundle = await export_screen(app)
        except (AtomicWriteError, ExportError, ConfigError, FleetdeskError) as error:
            message = error.message if isinstance(error, FleetdeskError) else str(error)
            app.notify(
                sanitize(message, 500), title="snapshot not written", severity="error", markup=False
            )
            return
        where = "\n".join(sanitize(str(path)) for path in bundle.paths)
        app.notify(where, title="snapshot written", timeout=30, markup=False)

    app.run_worker(run(), group="snapshot", exclusive=True, exit_on_error=False)
