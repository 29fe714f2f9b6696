"""What every console screen shares: worker failures go to the app's one failure handler."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker


class ConsoleScreen(Screen):
    """A full screen of the console."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state messages do not bubble; hand them to the app's single handler.
        self.app.on_worker_state_changed(event)  # type: ignore[attr-defined]
