"""The key bar at the bottom of every screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
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

    Keys that do not fit are never dropped silently: the bar then ends with ``? more`` (the help key,
    which lists every key), and the command palette key gives up its place first.
    """

    MORE = "more"
    """The help key's word when some keys did not fit."""

    _shown: tuple[Key, ...] | None = None
    _rebuild_pending = False
    _composed_width = 0

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
            states = {
                (key, action): (enabled, tooltip) for key, action, _, enabled, tooltip in keys
            }
            for item in textual_seam.footer_keys(self):
                if (state := states.get((item.key, item.action))) is not None:  # type: ignore[attr-defined]
                    enabled, tooltip = state
                    textual_seam.set_footer_key_state(item, enabled, tooltip or None)
            return
        await self.recompose()

    def compose(self) -> ComposeResult:
        items = list(super().compose())
        width = self._composed_width = self.size.width or self.app.size.width
        if sum(map(_key_width, items)) <= width:
            yield from items
            return
        keys = [item for item in items if not item.has_class("-command-palette")]
        help_key = next((item for item in keys if getattr(item, "action", None) == "help"), None)
        if help_key is None:
            yield from keys
            return
        keys.remove(help_key)
        help_key.description = self.MORE  # type: ignore[attr-defined]
        room = width - _key_width(help_key)
        for item in keys:
            room -= _key_width(item)
            if room < 0:
                break
            yield item
        yield help_key

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._composed_width and self._shown is not None:
            self._shown = None  # which keys fit may have changed: compose again
            if not self._rebuild_pending:
                self._rebuild_pending = True
                self.call_after_refresh(self._rebuild)

    def _keys(self) -> tuple[Key, ...]:
        return tuple(
            (key, active.binding.action, active.binding.description, active.enabled, active.tooltip)
            for key, active in self.screen.active_bindings.items()
            if active.binding.show
        )


def _key_width(item: Widget) -> int:
    """Cells a footer key takes: " key description " (Textual's FooterKey padding), the palette key's border too."""
    key, description = getattr(item, "key_display", ""), getattr(item, "description", "")
    width = len(key) + 2 + (len(description) + 1 if description else 0)
    return width + 2 if item.has_class("-command-palette") else width
