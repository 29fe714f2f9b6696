"""What every console screen shares: worker failures go to the app's one failure handler, and a screen
hidden under another full screen stays off the wire."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker


class ConsoleScreen(Screen):
    """A full screen of the console."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker state messages do not bubble; hand them to the app's single handler.
        self.app.on_worker_state_changed(event)  # type: ignore[attr-defined]

    def _compositor_refresh(self) -> None:
        # Textual repaints a changed screen through the screen stacked on top of it, in case the top one is
        # see-through; and a background screen feeds its own dirty regions back to itself, so once its whole
        # area is dirty every later change redraws the whole terminal (17 KB at 120x40, once a second on
        # the model view while the fleet underneath takes live updates). Under an opaque screen none of it
        # shows, and Textual repaints this screen in full when it comes back on top: drop the repaint.
        if self.app.screen is not self and self._covered():
            self._compositor._dirty_regions.clear()
            self._dirty_widgets.clear()
            return
        super()._compositor_refresh()

    def _covered(self) -> bool:
        """An opaque screen is stacked above this one."""
        stack = self.app.screen_stack
        above = stack[stack.index(self) + 1:] if self in stack else []
        return any(screen.styles.background.a == 1 for screen in above)
