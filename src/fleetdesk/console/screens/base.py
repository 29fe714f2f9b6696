"""What every console screen shares: worker failures go to the app's one failure handler, the status line
follows the link, Back leaves the screen, and a screen hidden under another full screen stays off the wire."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker

from fleetdesk.console.messages import LinkChanged
from fleetdesk.console.widgets.common.status import StatusLine


class ConsoleScreen(Screen):
    """A full screen of the console."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state messages do not bubble; hand them to the app's single handler.
        self.app.on_worker_state_changed(event)  # type: ignore[attr-defined]

    def on_link_changed(self, message: LinkChanged) -> None:
        self.query_one(StatusLine).show()

    def action_back(self) -> None:
        self.app.pop_screen()

    def _compositor_refresh(self) -> None:
        # Textual repaints a changed screen through the screen stacked on top of it (the top one may be
        # see-through), and also marks the changed area dirty on this screen again, so the same area is
        # sent again with every later change: once the whole screen has been dirty, every live update
        # redrew the whole terminal (17 KB at 120x40, once a second on the model view). Under an opaque
        # screen, hand the top screen what changed here (a toast leaving uncovers it), once.
        if self.app.screen is not self and self._covered():
            if self._compositor._dirty_regions:
                self.app.screen.refresh(*self._compositor._dirty_regions)
            self._compositor._dirty_regions.clear()
            self._dirty_widgets.clear()
            return
        super()._compositor_refresh()

    def _covered(self) -> bool:
        """An opaque screen is stacked above this one."""
        stack = self.app.screen_stack
        above = stack[stack.index(self) + 1:] if self in stack else []
        return any(screen.styles.background.a == 1 for screen in above)
