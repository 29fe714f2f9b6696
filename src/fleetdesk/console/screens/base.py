"""What every console screen shares: worker failures go to the app's one failure handler, the status line
follows the link, Back leaves the screen, a model is opened once its view is fetched, and a screen hidden
under another full screen stays off the wire."""

from __future__ import annotations

from textual import work
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from fleetdesk.console.messages import LinkChanged, LiveEvent, ModelViewFetched
from fleetdesk.console.widgets.common.status import StatusLine


class ConsoleScreen(Screen):
    """A full screen of the console."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "open-model" and event.state is WorkerState.ERROR:
            self.query_one(StatusLine).busy("")  # no longer opening; the app's notice says why
        # Worker state messages do not bubble; hand them to the app's single handler.
        self.app.on_worker_state_changed(event)  # type: ignore[attr-defined]

    _live_while_opening = False

    def open_model(self, model_id: str) -> None:
        """Show a model's view once all of it is fetched: it paints once, whole. Pushed first, it painted
        a skeleton, then the same again (~30 KB a slow link carries before the data can follow)."""
        self._live_while_opening = False
        self.query_one(StatusLine).busy(f"opening {model_id}…")
        self._fetch_model_view(model_id)

    def on_live_event(self, message: LiveEvent) -> None:
        # A model view being fetched may already be behind this event: it loads again once shown.
        self._live_while_opening = True

    @work(exclusive=True, group="open-model", exit_on_error=False)
    async def _fetch_model_view(self, model_id: str) -> None:
        from fleetdesk.console.screens.model import fetch_model_view

        self.post_message(ModelViewFetched(await fetch_model_view(self.app, model_id, self.app.chart_window)))  # type: ignore[attr-defined]

    def on_model_view_fetched(self, message: ModelViewFetched) -> None:
        from fleetdesk.console.screens.model import ModelScreen

        self.query_one(StatusLine).busy("")
        if self.app.screen is self:  # not if the engineer went elsewhere meanwhile
            self.app.push_screen(ModelScreen(message.loaded.detail.model.id, message.loaded,
                                             behind=self._live_while_opening))

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
