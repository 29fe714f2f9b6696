"""The key bar at the bottom of every screen."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

from fleetdesk.console import textual_seam

Key = tuple[str, str, str, bool, str]
"""key, action, description, enabled, tooltip"""


class KeyFooter(Footer):
    """Textual's footer, changed in place when only keys' states change, rebuilt once per burst otherwise.

    Textual rebuilds its footer (a widget per key, then a layout pass) on every bindings refresh:
    focus moves, a screen is stacked, a key's state is checked again. Opening a model view did that
    seven times, about 100 ms of the open; usually nothing on the bar had changed, or a key only went
    from dim to bright.
    """

    _shown: tuple[Key, ...] | None = None
    _rebuild_pending = False

    def bindings_changed(self, screen: Screen) -> None:
        textual_seam.mark_bindings_ready(self)
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if not self._rebuild_pending and self._keys() != self._shown:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        keys, shown = self._keys(), self._shown
        self._shown = keys
        if shown is not None and [k[:3] for k in keys] == [k[:3] for k in shown]:
            states = {(key, action): (enabled, tooltip) for key, action, _, enabled, tooltip in keys}
            for item in textual_seam.footer_keys(self):
                if (state := states.get((item.key, item.action))) is not None:  # type: ignore[attr-defined]
                    enabled, tooltip = state
                    textual_seam.set_footer_key_state(item, enabled, tooltip or None)
            return
        await self.recompose()

    def _keys(self) -> tuple[Key, ...]:
        return tuple((key, active.binding.action, active.binding.description, active.enabled, active.tooltip)
                     for key, active in self.screen.active_bindings.items() if active.binding.show)
