"""A Static that repaints only when what it shows changed, and re-lays out the screen only when its height did.

Live updates often bring the same text, or text of the same height (a burn rate moving from 2.1x to 2.3x);
a layout pass would repaint the whole screen, which over a slow link is most of the bytes sent.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class QuietStatic(Static):
    def show_text(self, text: Text) -> None:
        """Show ``text`` unless it is exactly what is already shown (same characters and styles)."""
        if text == getattr(self, "_shown_text", None):
            return
        width = self.content_size.width
        height = len(text.wrap(self.app.console, width)) if width > 0 else None
        same_height = height is not None and height == getattr(self, "_shown_height", None)
        self._shown_text, self._shown_height = text, height
        self.update(text, layout=not same_height)
