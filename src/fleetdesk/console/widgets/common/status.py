"""The status line: link state and data age on the left, the last action's outcome on the right."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from fleetdesk.console.host import host
from fleetdesk.console.palette import palette
from fleetdesk.domain.text import sanitize

_AGE_TICK = 5.0


class StatusLine(Static):
    """One line; it repaints only when its words change (the age ticks every few seconds)."""

    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._note = ""
        self._note_warning = False
        self._busy = ""
        self._shown: tuple[str, bool, str, bool] | None = None

    def on_mount(self) -> None:
        self.set_interval(_AGE_TICK, self.show)
        self.show()

    def say(self, note: str, warning: bool = False) -> None:
        """Set the right-hand note (e.g. 'rollback in flight…' or an action's outcome)."""
        self._note = sanitize(note, limit=300)
        self._note_warning = warning
        self.show()

    def busy(self, doing: str) -> None:
        """Say what is under way (e.g. 'opening MODEL…') in place of the note, until ``busy("")``."""
        self._busy = sanitize(doing, limit=300)
        self.show()

    @property
    def note(self) -> str:
        return self._note

    def show(self) -> None:
        words, warning = host(self).link.describe()
        state = (words, warning, self._busy or self._note, self._note_warning and not self._busy)
        if state == self._shown:
            return
        self._shown = state
        colours = palette(self.app)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(
            words,
            style=f"bold {colours.get('warning', '')}" if warning else colours.get("success", ""),
        )
        _, _, note, note_warning = state
        if note:
            line.append("  │  " if host(self).glyphs.braille else "  |  ")
            line.append(note, style=f"bold {colours.get('warning', '')}" if note_warning else "")
        self.update(line)
