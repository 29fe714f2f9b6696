"""What every console screen shares: worker failures go to the app's one failure handler, the status line
follows the link, Back leaves the screen, and a screen hidden under another full screen stays off the wire
(its repaint hand-off is installed onto this class by ``console.textual_seam`` when the app starts)."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker

from fleetdesk.console.host import ConsoleHost, host
from fleetdesk.console.messages import LinkChanged
from fleetdesk.console.widgets.common.status import StatusLine


class ConsoleScreen(Screen):
    """A full screen of the console."""

    @property
    def console(self) -> ConsoleHost:
        """The app, as screens may use it."""
        return host(self)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state messages do not bubble; hand them to the app's single handler.
        self.console.worker_state_changed(event)

    def open_model(self, model_id: str) -> None:
        """Show a model's view once all of it is fetched (see FleetdeskApp.open_model)."""
        self.console.open_model(model_id)

    def on_link_changed(self, message: LinkChanged) -> None:
        self.query_one(StatusLine).show()

    def action_back(self) -> None:
        self.app.pop_screen()

    def covered(self) -> bool:
        """An opaque screen is stacked above this one."""
        stack = self.app.screen_stack
        above = stack[stack.index(self) + 1 :] if self in stack else []
        return any(screen.styles.background.a == 1 for screen in above)
