"""What screens and widgets may ask of the console app: a typed contract instead of ``self.app.<anything>``.

Screens and widgets reach the app through ``host(self)``; the app (``console.app.FleetdeskApp``) keeps the
contract (mypy checks it there), and nothing here imports the app or a screen, so no import runs in a circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, cast

from textual.dom import DOMNode
from textual.worker import Worker

from fleetdesk.client import FleetdeskClient
from fleetdesk.console.connection import Link
from fleetdesk.console.glyphs import Glyphs
from fleetdesk.console.typed_ahead import TypedKey
from fleetdesk.settings.console import ConsoleSettings
from fleetdesk.wire import Window


class ConsoleHost(Protocol):
    """The console app as its screens and widgets see it."""

    client: FleetdeskClient
    """The only way to the backend."""
    glyphs: Glyphs
    link: Link
    settings: ConsoleSettings
    chart_window: Window
    """The window the charts were last switched to: the next model view opens with it."""

    @property
    def can_act(self) -> bool:
        """Action keys exist at all: not read-only and not a viewer token."""

    def server_now(self) -> datetime | None:
        """The server's time now, for 'ago'."""

    def data_arrived(self) -> None:
        """A read or an event came in: the data is fresh."""

    def read_failed(self) -> None:
        """A read failed: the link may be down."""

    def start_live(self) -> None:
        """Start following the live feed (once)."""

    def open_model(self, model_id: str) -> None:
        """Fetch a model's whole view, then show it on top of the current screen."""

    def type_again(self, keys: Sequence[TypedKey]) -> None:
        """Deliver keys typed before their dialog opened, in order, as the terminal would have."""

    def worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A screen's background job changed state: failures become plain-words notices, in one place."""


def host(node: DOMNode) -> ConsoleHost:
    """The console app behind a screen or widget."""
    return cast(ConsoleHost, node.app)
