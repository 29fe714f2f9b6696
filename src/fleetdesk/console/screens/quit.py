"""Asking before quitting: an incident console must not vanish on a stray key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class QuitScreen(ModalScreen[bool]):
    """Quit? with Cancel focused."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="quit-cancel", tooltip="Stay in the console."),
        Binding("y", "confirm", "Quit", id="quit-confirm", tooltip="Quit the console."),
    ]
    AUTO_FOCUS = "#cancel"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Quit fleetdesk?", classes="dialog-title")
            yield Static("Press y to quit, Esc to stay. (ctrl+q quits at once.)")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel", variant="primary", compact=True)
                yield Button("Quit", id="quit", variant="error", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit")

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        self.dismiss(True)
