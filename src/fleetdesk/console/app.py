"""The live console: the console app with its handoff key, ``s`` (a snapshot of what it shows)."""

from __future__ import annotations

from textual.binding import Binding

from fleetdesk.console.core import Backend, ConsoleApp

__all__ = ["Backend", "FleetdeskApp"]


class FleetdeskApp(ConsoleApp):
    """The on-call console against a live backend."""

    BINDINGS = [
        Binding(
            "s",
            "snapshot",
            "Snapshot",
            id="snapshot",
            show=False,
            tooltip="Write a handoff snapshot of this screen (JSON, Markdown summary, SVG) to the data dir.",
        ),
    ]

    def action_snapshot(self) -> None:
        # Imported on the first ``s``, not at start-up: the snapshot's schemas cost tens of ms before the
        # first paint, for a key most sessions never press.
        from fleetdesk.console.snapshot.export import start_export

        start_export(self)
