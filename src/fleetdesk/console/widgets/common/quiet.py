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
        if (
            len(before) != len(after)
            and self.styles.height is not None
            and self.styles.height.is_auto
        ):
            self.refresh(layout=True)  # taller or shorter: the screen lays out again
            return
        changed = [
            region
            for y in range(max(len(before), len(after)))
            if (
                region := _changed_span(
                    before[y] if y < len(before) else None,
                    after[y] if y < len(after) else None,
                    y,
                    width,
                )
            )
        ]
        if changed:
            self.refresh(*changed)

    def _strips(self) -> list[Strip]:
        """The lines as Textual draws them at the current width (the way Widget renders its content)."""
        width = self.size.width
        if width <= 0 or not self.is_mounted:
            return []
        return Visual.to_strips(
            self, visualize(self, self._text, markup=False), width, None, self.visual_style
        )


def _cells(strip: Strip | None) -> list[tuple[str, object]]:
    if strip is None:
        return []
    return [(char, segment.style) for segment in strip for char in segment.text]


def _changed_span(before: Strip | None, after: Strip | None, y: int, width: int) -> Region | None:
    """The part of line ``y`` between its first and last changed cell (Textual writes no more than that)."""
    old, new = _cells(before), _cells(after)
    if old == new:
        return None
    longest = max(len(old), len(new))
    old += [("", None)] * (longest - len(old))
    new += [("", None)] * (longest - len(new))
    first = next(x for x in range(longest) if old[x] != new[x])
    last = next(x for x in reversed(range(longest)) if old[x] != new[x])
    return Region(first, y, min(width, last + 1) - first, 1)
