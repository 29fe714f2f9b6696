"""A text panel that repaints only the lines that look different, and re-lays out the screen only when its height did.

Live updates often bring the same text, or text that differs in one line (a burn rate moving from 2.1x
to 2.3x). Textual's Static repaints all of itself on any update, and a layout pass repaints the whole
screen; over a slow link those repaints are most of the bytes sent.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget


class QuietStatic(Widget):
    """Shows one rich Text (never markup), wrapped to its width."""

    DEFAULT_CSS = """
    QuietStatic { height: auto; }
    """

    def __init__(self, text: str | Text = "", **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._text = Text(text) if isinstance(text, str) else text

    @property
    def text(self) -> Text:
        return self._text

    def render(self) -> Text:
        return self._text

    def show_text(self, text: Text | str) -> None:
        """Show ``text``; repaint only the lines that render differently, or nothing when none do."""
        text = Text(text) if isinstance(text, str) else text
        if text == self._text:
            return
        before = self._strips()
        self._text = text
        after = self._strips()
        width = self.size.width
        if len(before) != len(after) and self.styles.height is not None and self.styles.height.is_auto:
            self.refresh(layout=True)  # taller or shorter: the screen lays out again
            return
        changed = [Region(0, y, width, 1) for y in range(max(len(before), len(after)))
                   if y >= len(before) or y >= len(after) or before[y].text != after[y].text
                   or list(before[y]) != list(after[y])]
        if changed:
            self.refresh(*changed)

    def _strips(self) -> list[Strip]:
        """The lines as Textual draws them at the current width (the way Widget renders its content)."""
        width = self.size.width
        if width <= 0 or not self.is_mounted:
            return []
        return Visual.to_strips(self, visualize(self, self._text, markup=False), width, None, self.visual_style)
